/* SPDX-License-Identifier: MIT */
/*
 * A target's result folder: where its PROF_ folders are looked for, and
 * how a finished one reaches --output.
 *
 * Three cases, chosen at connect (session_connect.c):
 * - it can see --output: it writes there; nothing moves.
 * - it cannot (a container): a folder in its own filesystem, made, listed,
 *   copied out and removed by its helper (ns/fshelper.h), with its rights.
 * - no helper could be made (dynprof may not enter its namespaces): the
 *   same folder through an fd opened on the host side (result_fd), moved
 *   by results/copytree.c under the same rules, with dynprof's rights.
 */
#ifndef DYNPROF_TARGET_RESULTS_H
#define DYNPROF_TARGET_RESULTS_H

#include <stdatomic.h>

#include "ns/fshelper.h"
#include "shared/compiler.h"
#include "session/target_impl.h"

/*
 * The target's PROF_ folders not yet in t->prof_seen (which grows), by its
 * names (target_prof_names): found(ctx, name) for each; found NULL takes a
 * snapshot. 0 or a negative errno.
 */
int target_results_scan(struct target *t, void (*found)(void *ctx, const char *name),
			void *ctx) DP_MUST_CHECK;

/*
 * Bring folder `name` to `output`/`dst` (a path relative to output whose
 * folders exist: "PROF_..." or "<container>/PROF_...") when it was written
 * elsewhere (a no-op when the target writes to --output itself). 0; 1
 * when copied but its source could not be removed; or a negative errno
 * (-EFBIG, -EMLINK, -EINTR, -ETIMEDOUT as fshelper_copy). `done` says
 * what was copied and skipped (zeroed when nothing was).
 */
int target_results_move(struct target *t, const char *name, const char *output, const char *dst,
			const struct fshelper_limits *lim, struct fshelper_copied *done) DP_MUST_CHECK;

/*
 * What a collection beside the loop needs (session/collect.c): nothing of
 * the target's state the loop changes meanwhile. Its helper is the
 * collection's alone while it runs.
 */
struct results_collect {
	struct fshelper *h;
	const char *inside;       /* the result folder as the target sees it (for messages) */
	int names;                /* target_prof_names */
	const char *output, *sub; /* where folders go: output/sub/<name> ("" sub: output/<name>) */
	struct fshelper_limits lim;
	/*
	 * The window was stopped cleanly, and (*next_started, set by the loop
	 * before it sends the target a START) a next window may have begun: a
	 * folder without end_info is then that one's, left for its own look.
	 */
	bool finished_only;
	const atomic_bool *next_started;
	/* each folder found and moved: rc as target_results_move's */
	void (*moved)(void *ctx, const char *prof, const char *dst, int rc,
		      const struct fshelper_copied *copied);
	void *ctx;
};

/*
 * List the result folder through c->h and move each wanted folder not in
 * *known (which grows), calling c->moved for each. 0 or the listing's
 * negative errno. Prints nothing but a not-a-folder warning.
 */
int target_results_collect(const struct results_collect *c, char **known) DP_MUST_CHECK;

/* Whether folders are moved out of the target's filesystem. */
bool target_results_elsewhere(const struct target *t);

#endif /* DYNPROF_TARGET_RESULTS_H */
