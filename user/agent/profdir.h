/* SPDX-License-Identifier: MIT */
/*
 * The PROF_ folder of one window, laid out as CANN lays it out: made at
 * START with host/data/ and the start-time control files, completed at
 * STOP with end_info. No collected data is invented: host/data/ stays
 * empty until something real writes into it.
 */
#ifndef DYNPROF_AGENT_PROFDIR_H
#define DYNPROF_AGENT_PROFDIR_H

#include <limits.h>

#include "agent/device.h"
#include "shared/profhost.h"
#include "shared/compiler.h"

/*
 * host/<this>: the params the window runs with after CANN's overlay (v2) or
 * replace (v1) and the dataTypeConfig the server computes from them
 * (agent/params.h). dynprof's own file, not CANN's.
 */
#define PROFDIR_EFFECTIVE_PARAMS "dynprof_params.json"

struct profdir {
	struct profhost host; /* host.path: the PROF_ folder */
};

/*
 * Parse the START's params into the kept set (agent/params.h), make the
 * folder under its result_dir (created when missing) and write sample.json,
 * dynprof_params.json, start_info, host_start.log and info.json (naming
 * `chip`). sample.json is the params with "devices" set to the host's 64:
 * the folder holds host data only. Returns 0
 * or a negative errno; on failure after mkdir the partial folder stays.
 * `v1_name`: named as CANN's v1 names it (no pid, 16 letters).
 */
int profdir_open(struct profdir *pd, int v1_name, const char *params_json, int chip) DP_MUST_CHECK;

/* host/<this>: written when the agent stopped a window whose client vanished (dynprof's, not CANN's). */
#define PROFDIR_ORPHAN_NOTE "dynprof_orphaned.txt"

/* Write `text` as host/<name> (no .done sidecar: not a CANN file). 0 or a negative errno. */
int profdir_note(const struct profdir *pd, const char *name, const char *text) DP_MUST_CHECK;

/* Write end_info. 0 or a negative errno. */
int profdir_close(const struct profdir *pd) DP_MUST_CHECK;

#endif /* DYNPROF_AGENT_PROFDIR_H */
