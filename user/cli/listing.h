/* SPDX-License-Identifier: MIT */
/*
 * `dynprof --list [--watch] [--json]`: the card-using processes as a table
 * or a JSON array, and their changes as they happen, one line each.
 * The JSON schema is documented in docs/LIST-JSON.md.
 */
#ifndef DYNPROF_LISTING_H
#define DYNPROF_LISTING_H

#include "config/options.h"
#include "shared/compiler.h"

/* Run --list (and --watch). Returns the exit status. */
int listing_run(const struct options *o) DP_MUST_CHECK;

#endif /* DYNPROF_LISTING_H */
