/* SPDX-License-Identifier: MIT */
/*
 * How each window ended: saved (its PROF_ folder in --output, finished),
 * saved incomplete (a folder in --output without host/end_info: the
 * process ended or was killed before the window was stopped), or lost,
 * with the reason (no folder found, a move that failed). The session fills
 * one account per window when it ends; the console line, the record
 * (<dynprof pid>_dynprof_windows), the window-close event and the summary
 * are all made from it, so they cannot disagree.
 *
 * Errors: convention 1 of docs/ERRORS.md (negative errno, the caller prints).
 */
#ifndef DYNPROF_WINACCOUNT_H
#define DYNPROF_WINACCOUNT_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "shared/compiler.h"

enum window_fate { WINDOW_SAVED, WINDOW_INCOMPLETE, WINDOW_LOST };

#define WINACCOUNT_PROF_MAX 8   /* folders listed per window (one in practice) */
#define WINACCOUNT_NAME_LEN 160 /* a PROF_ name is 46 characters; "<container>/" may come first */

struct window_account {
	enum window_fate fate;
	const char *ended; /* what ended it: stop, quit, exit, disconnect, error */
	int saved;         /* folders moved and finished */
	int incomplete;    /* folders moved without end_info */
	int failed;        /* folders found but not moved */
	int nprof;         /* names listed in prof (saved and incomplete) */
	char prof[WINACCOUNT_PROF_MAX][WINACCOUNT_NAME_LEN];
	char reason[512]; /* lost: why; incomplete: what is missing */
	int64_t opened_us, closed_us;
	uint64_t host_lost; /* host data records lost (user/hostdata/): the window is incomplete */
	int number;         /* its target's n-th window, from 1 */
};

/* "saved", "incomplete" or "lost": the JSON and event word. */
const char *window_fate_name(enum window_fate fate);

/*
 * <dir>/<name> is a finished PROF_ folder: host/end_info is a regular
 * file (CANN and our agent write it at STOP; a process killed mid-window
 * leaves none). Nothing is followed: dir's entry, host and end_info must
 * be what they say. 1 finished, 0 not, or a negative errno.
 */
int winaccount_prof_finished(const char *dir, const char *name) DP_MUST_CHECK;

/*
 * The account's members in a record object: fate, ended, prof (absolute
 * paths under output), reason (when not saved), closed_us.
 */
void winaccount_to_json(const struct window_account *a, const char *output, cJSON *obj);

/*
 * Who a window's target is, in a record object: nspid, container (null on
 * the host), command (escaped: a target's own text). The one writer of
 * these fields for every window record line, a rule's or the console's.
 */
void winaccount_origin_to_json(cJSON *obj, int nspid, const char *container, const char *command);

/*
 * Append one JSON line to <output>/<dynprof pid>_dynprof_windows (the
 * window record, opened through output_open_file). 0 or a negative errno.
 */
int winaccount_record_line(const char *output, cJSON *obj) DP_MUST_CHECK;

#endif /* DYNPROF_WINACCOUNT_H */
