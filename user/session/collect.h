/* SPDX-License-Identifier: MIT */
/*
 * A window's folders brought out of a target's own filesystem beside the
 * loop (common/offloop.h): the listing, the copies and the removals go
 * through the target's helper, which the target's user can stop, slow or
 * feed a FUSE file, so none of it may wait in the loop. Private to session/.
 *
 * A target's collections run one at a time, in the order its windows
 * ended (they share its helper); while one runs, the loop leaves the
 * helper and the target's list of known folders alone. The whole
 * collection has one deadline (--window-copy-time), besides the helper's
 * per-message limit: past it the helper is killed and what was not moved
 * is left where it is, said as the reason.
 */
#ifndef DYNPROF_COLLECT_H
#define DYNPROF_COLLECT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/offloop.h"
#include "session/target_results.h"

struct events_close;

struct collect_result {
	char prof[NAME_MAX + 1];
	char dst[PATH_MAX]; /* relative to --output */
	int rc;             /* as target_results_move's */
	struct fshelper_copied copied;
};

struct collect {
	struct offloop_job job;
	struct offloop *q;
	struct target *t;
	struct results_collect in;
	char output[PATH_MAX];
	char sub[128];
	int64_t deadline_ms;
	char *seen; /* t's known names when it started, grown by it, merged into t at its end */
	atomic_bool next_started; /* a START went to t after this window ended (results_collect) */
	/* what it did */
	int list_rc;
	struct collect_result *res;
	size_t n, cap;
	bool res_lost; /* out of memory noting one: said at the end */
	/* the caller's: the window's end, finished on the loop's thread */
	void (*done)(struct collect *c);
	void *ctx;
	char ended[16];
	char why[256];
	bool has_why;
	struct events_close *ev;
	struct collect *next; /* t's next collection */
};

/* A collection of t's folders into output/sub, its deadline in ms from now. NULL: out of memory. */
struct collect *collect_new(struct target *t, const char *output, const char *sub,
			    const struct fshelper_limits *lim, int deadline_ms);

/* Before a START goes to t: its pending collections leave the next window's folder alone. */
void collect_next_started(struct target *t);

/*
 * Run c beside the loop: now, or after t's collections before it. Its
 * done(c) runs on the loop's thread once it ended (t's known names
 * already merged); c is freed after. 0, or a negative errno (nothing runs,
 * c is the caller's).
 */
int collect_queue(struct offloop *q, struct collect *c) DP_MUST_CHECK;

#endif /* DYNPROF_COLLECT_H */
