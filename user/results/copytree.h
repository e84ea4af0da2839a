/* SPDX-License-Identifier: MIT */
/*
 * Moving a finished PROF_ folder out of a container's filesystem (reached
 * through /proc/<pid>/root) into the host's result folder: rename when both
 * are on one filesystem, else copy (folders, regular files, modes) and
 * remove the source. Symlinks and special files are skipped, never
 * followed: the source is written by the target and not trusted.
 */
#ifndef DYNPROF_COPYTREE_H
#define DYNPROF_COPYTREE_H

#include <stdbool.h>

#include "shared/compiler.h"

/*
 * Move folder `src` to `dst` (which must not exist). 0 or negative errno.
 * A copy never crosses a mount point below src nor removes anything on
 * another mount; it copies regular files' data only (sparse files stay
 * sparse) up to max_bytes in all (-EFBIG past it), and gives up with
 * -EINTR as soon as SIGINT, SIGTERM or SIGHUP is pending. When a copy
 * stops, src is left whole and the part copied is removed.
 */
int copytree_move(const char *src, const char *dst, unsigned long long max_bytes) DP_MUST_CHECK;

/*
 * Remove folder `name` of `parent` and what it holds on its own mount
 * (nothing on another is touched; no symlink followed). For dynprof's own
 * folders (a copy given up); a target's are removed by its helper.
 */
int copytree_remove(int parent, const char *name) DP_MUST_CHECK;

/* SIGINT, SIGTERM or SIGHUP pending (they are blocked: a signalfd reads them). */
bool copytree_signal_pending(void);

#endif /* DYNPROF_COPYTREE_H */
