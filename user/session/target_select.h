/* SPDX-License-Identifier: MIT */
/*
 * Which processes --pid names, when it is not a plain list of host pids:
 *  --pid=auto                 every card user whose dynamic-profiling socket
 *                             listens (not busy), optionally only those in
 *                             --container=ID;
 *  --pid=N --container=ID     N is the pid inside that container (its
 *                             innermost NSpid), mapped to the host pid.
 * The answer comes from one scan of the process model.
 *
 * Errors: convention 3 of docs/ERRORS.md (printed).
 */
#ifndef DYNPROF_TARGET_SELECT_H
#define DYNPROF_TARGET_SELECT_H

#include <stdbool.h>
#include <stddef.h>

#include "config/options.h"
#include "shared/compiler.h"

/*
 * Rewrite the pid list as host pids in *out ("12,34", malloc'd, any
 * length: the caller frees it). Returns 0; or -ENOENT after printing why
 * when nothing matches (the caller exits 255), -ENOMEM (printed).
 * Pids that do not resolve are warned about and skipped.
 */
int target_select(const struct options *o, char **out) DP_MUST_CHECK;

struct procmodel;
struct pm_proc;

/*
 * Processes dynprof cannot look into (not root: other users' fds are not
 * readable, so their cards are not seen): their number, 0 as root.
 */
int target_select_unseen(const struct procmodel *m);

/*
 * Why card holder `p` serves no socket, in words, into buf: a fork of a
 * card holder without exec (a worker pool's child: CANN serves in the
 * process that initialised it, our agent never in a forked child), else
 * that it was started without PROFILING_MODE=dynamic or has not
 * initialised yet. true for the fork.
 */
bool target_select_nosocket_why(const struct procmodel *m, const struct pm_proc *p, char *buf,
				size_t len);

#endif /* DYNPROF_TARGET_SELECT_H */
