/* SPDX-License-Identifier: MIT */
/*
 * The collection parameters a target receives: one flat JSON object of
 * strings (cJSON), `result_dir` plus the key of every switch the user gave,
 * with msprof's key names. The protocol carries fewer than 4096 bytes.
 *
 * Errors: convention 3 of docs/ERRORS.md (NULL after printing why).
 */
#ifndef DYNPROF_PARAMS_H
#define DYNPROF_PARAMS_H

#include "config/options.h"

/*
 * Build the JSON for a target whose result folder (as the target sees it)
 * is `result_dir`. Returns a malloc'd string, or NULL after printing why
 * (too long for the protocol, or out of memory).
 */
char *params_build(const struct options *o, const char *result_dir);

#endif /* DYNPROF_PARAMS_H */
