/* SPDX-License-Identifier: MIT */
/*
 * Reading files in a target's filesystem (its passwd file, its toolkit's
 * version files) with the target's rights.
 *
 * When the target is not dynprof's own kind (another mount or user
 * namespace, or another uid), the reads are done by a helper
 * (ns/fshelper.h) started on the first read and kept for the others of
 * the same look: the kernel checks them as the target's user, and a file
 * that blocks (FUSE) costs at most FSHELPER_WAIT_MS. Otherwise the file is
 * read from the host side through rootfile_open(): inside its root, no
 * symlink at the end, regular files only, never blocking on open. When no
 * helper can be made, the host side stands in only where it has the
 * target's rights and no more (targetfs_host_side_ok): a root dynprof
 * refuses such a target instead of reading with root's rights.
 */
#ifndef DYNPROF_TARGETFS_H
#define DYNPROF_TARGETFS_H

#include <stdbool.h>
#include <stddef.h>

#include "ns/fshelper.h"
#include "shared/compiler.h"

struct targetfs {
	int pid;
	int rootfd;         /* /proc/<pid>/root, O_PATH */
	struct fshelper *h; /* started on the first read that needs it */
	bool helper_tried;
	bool by_helper; /* reads go through a helper */
	char why[192];  /* why no helper could be made, once one was tried */
};

/* Begin reading in pid's filesystem. 0, or a negative errno (-ESRCH gone, -EACCES not allowed). */
int targetfs_open(struct targetfs *fs, int pid) DP_MUST_CHECK;
void targetfs_close(struct targetfs *fs);

/*
 * `path` (absolute, as the target names it) into a new NUL-terminated
 * buffer, at most max bytes. 0, or -ENOENT, -EACCES, -ELOOP (a final
 * symlink, host side only), -ROOTFILE_ENOTREG, -EFBIG, -ETIMEDOUT, -EPERM
 * (no helper could be made and the host side may not stand in: fs->why
 * says why), ...
 */
int targetfs_read(struct targetfs *fs, const char *path, size_t max, char **buf, size_t *len) DP_MUST_CHECK;

/* Whether a process acts with other rights than dynprof's own, or lives in other namespaces. */
bool targetfs_foreign(int pid);

/*
 * Whether dynprof acting from the host side in pid's filesystem would have
 * the target's rights and no more: dynprof is not root and runs as the
 * target's uid. When false and no helper can be made, the target is refused.
 */
bool targetfs_host_side_ok(int pid);

/* The words for a target refused so (-EPERM from targetfs_read), with why. */
#define TARGETFS_REFUSED \
	"refused: dynprof would act in its filesystem with root's rights, not its own"

#endif /* DYNPROF_TARGETFS_H */
