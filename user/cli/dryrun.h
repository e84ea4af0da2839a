/* SPDX-License-Identifier: MIT */
/*
 * --dry-run: print the params JSON each target would receive, exactly as
 * it would be sent, and connect to nothing. Compare it with the JSON
 * `msprof --dynamic` sends (its server log shows it).
 */
#ifndef DYNPROF_DRYRUN_H
#define DYNPROF_DRYRUN_H

#include "config/options.h"
#include "shared/compiler.h"

/* Returns the exit status: 0, or 255 after printing why. */
int dryrun_run(const struct options *o) DP_MUST_CHECK;

#endif /* DYNPROF_DRYRUN_H */
