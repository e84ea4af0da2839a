/* SPDX-License-Identifier: MIT */
/*
 * What the agent needs from the client's params JSON: only result_dir.
 * Every other key is the client's business and is kept verbatim in
 * sample.json; unknown keys are fine.
 */
#ifndef DYNPROF_AGENT_PARAMS_H
#define DYNPROF_AGENT_PARAMS_H

#include <stddef.h>

#include "shared/compiler.h"

/*
 * Copy result_dir into `out`. Returns 0; -EINVAL when the text is not a
 * JSON object or result_dir is missing, not a string or empty;
 * -ENAMETOOLONG when it does not fit.
 */
int params_result_dir(const char *json, char *out, size_t len) DP_MUST_CHECK;

#endif /* DYNPROF_AGENT_PARAMS_H */
