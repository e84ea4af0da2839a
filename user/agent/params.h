/* SPDX-License-Identifier: MIT */
/*
 * The params a window runs with, kept and parsed as CANN keeps and parses
 * them (docs/PROTOCOL.md Part 2 sections 4.1, 4.2 and 5):
 *
 * - v2 (9.x, 8.5.0): one set for the process's lifetime. Each START parses
 *   its connection's JSON as NanoJson does (strings end at the next '"',
 *   no escape is decoded, commas and colons optional, trailing garbage
 *   ignored; a bad number anywhere fails the START) and overlays it: an
 *   absent key keeps its value, a key of the wrong type or null is cleared
 *   to ""/0/false. Then the server's own rewrites (host_sys_pid, prof_level,
 *   runtimeTrace) persist too.
 * - v1: nlohmann, strict: valid JSON only, escapes decoded, exact types;
 *   the set is replaced at every START (absent keys get their default).
 *
 * The keys and types are those of shared/msprof_params.h; other keys are
 * parsed and dropped. Callers serialise (the window lock).
 *
 * Errors: convention 1 of docs/ERRORS.md (negative errno).
 */
#ifndef DYNPROF_AGENT_PARAMS_H
#define DYNPROF_AGENT_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#include "dynprof/proto.h"
#include "shared/compiler.h"

/*
 * Parse a START's JSON into the kept set of generation `gen`. 0, or
 * -EINVAL when the parser CANN uses would fail (the set is then unchanged)
 * or, v2, when storageLimit is not <N>MB with N >= 200 (the set is then
 * kept, with "200MB" for a value below 200, as 9.x does); -ENOMEM.
 */
int agent_params_apply(enum proto_version gen, const char *json) DP_MUST_CHECK;

/*
 * The folder the window's PROF_ folder goes in: result_dir, else (v2) the
 * server's default, $ASCEND_WORK_PATH/profiling_data or the executable's
 * folder. 0, -EINVAL (v1: none), -ENAMETOOLONG.
 */
int agent_params_result_dir(char *out, size_t len) DP_MUST_CHECK;

/* v2: the dataTypeConfig CANN 9.x computes from the kept set (acl9:1342-1431). v1: the one sent. */
uint64_t agent_params_data_type_config(void);

/*
 * The effective set as JSON (malloc'd; NULL: out of memory):
 * {"generation":"v2","dataTypeConfig":"0x...","params":{...every key...}}
 */
char *agent_params_effective_json(void);

/* Back to an empty set (tests; a v1 reset). */
void agent_params_reset(void);

#endif /* DYNPROF_AGENT_PARAMS_H */
