/* SPDX-License-Identifier: MIT */
/*
 * A per-target helper: a child process that works in a target's filesystem
 * with the target's rights, never root's (issue 15's principle).
 *
 * It is forked from dynprof, joins the target's user namespace (when the
 * target has its own) and mount namespace, takes the target's root, drops
 * every group, sets the target's gid, groups and uid (as the target's user
 * namespace numbers them), drops all capabilities, sets no_new_privs and
 * is not dumpable (the target's user cannot ptrace it); every fd but its
 * channel is closed first. What it may do there the kernel decides: a
 * folder mounted or linked where a root-owned one should not be, a file
 * the user may not read, a folder the user may not remove, all fail for
 * it as they would for the user.
 *
 * It hands dynprof only data: a file's bytes, the names in its result
 * folder, a stream of a folder (fshelper_copy). It never hands an fd:
 * reading an fd of a FUSE file could block dynprof; the helper blocking
 * instead is noticed by a deadline and the helper killed.
 *
 * Life: one per target whose results live in its own filesystem, from its
 * join until its last folder is moved out (target_free). Being a member
 * of the target's mount namespace, it keeps that namespace (and the
 * folders in it) reachable after the target's last process exited.
 *
 * Every function returns 0 or a negative errno; -EPIPE / -ETIMEDOUT mean
 * the helper is gone or stuck (it is then killed; later calls give
 * -EPIPE), -EINTR that SIGINT, SIGTERM or SIGHUP is pending (looked at
 * every 200 ms while waiting; the helper is then killed too: its answer
 * is of no use). Nothing here prints.
 */
#ifndef DYNPROF_FSHELPER_H
#define DYNPROF_FSHELPER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "shared/compiler.h"

struct fshelper;

/* How long one answer (one message of a stream) may take. */
#define FSHELPER_WAIT_MS 5000

/*
 * Start the helper of process `pid`. 0 and *out, or: -ESRCH (gone),
 * -EPERM (dynprof may not enter its namespaces), -ENOENT (its uid has no
 * number inside its user namespace), another negative errno. `why` gets
 * one line on failure.
 */
int fshelper_start(int pid, struct fshelper **out, char *why, size_t len) DP_MUST_CHECK;
void fshelper_stop(struct fshelper *h);
/* The helper's pid (tests, logs). */
int fshelper_pid(const struct fshelper *h);

/*
 * Every answer from now on must come before deadline_ms (clock_ms; 0: no
 * such deadline), besides FSHELPER_WAIT_MS for each: past it the helper is
 * killed and the call gives -ETIME. A window's copy has one deadline
 * however its time is spent: a helper let run a little every few seconds
 * passes every per-message limit, never this one.
 */
void fshelper_set_deadline(struct fshelper *h, int64_t deadline_ms);

/* A regular file's contents as the target reads path (in its root), at most max bytes. */
int fshelper_read(struct fshelper *h, const char *path, size_t max, char **buf, size_t *len) DP_MUST_CHECK;

/*
 * Make (or reuse) home/sub1/sub2 for the target's user and hold it as the
 * result folder: each part made by the helper, so the target's user owns
 * it; an existing part that is not a folder of that user (a symlink, a
 * mount, someone else's) is refused: -ENOTDIR, -EXDEV, -EPERM.
 */
int fshelper_result_dir(struct fshelper *h, const char *home, const char *sub1,
			const char *sub2) DP_MUST_CHECK;

/* The names in the result folder with their kind (FSH_KIND_*). */
int fshelper_list(struct fshelper *h, void (*each)(void *ctx, const char *name, int kind),
		  void *ctx) DP_MUST_CHECK;

/* Limits of one copy; what a copy did. */
struct fshelper_limits {
	unsigned long long max_bytes; /* data bytes written (holes are not) */
	unsigned long long max_files; /* folders and files made */
};

struct fshelper_copied {
	unsigned long long bytes, files;
	unsigned skipped;     /* symlinks, special files, mounts, unreadable */
	char first_skip[256]; /* the first skipped path, escaped for printing */
	int first_skip_err;
};

/*
 * Copy the folder `name` of the result folder into a new folder dst_name
 * made in dst_dirfd (O_EXCL): folders, regular files' data (sparse stays
 * sparse), modes; no symlink, special file or other mount. Stops with
 * -EFBIG (max_bytes), -EMLINK (max_files), -EINTR (SIGINT, SIGTERM or
 * SIGHUP pending), -ETIMEDOUT (the helper stalled past FSHELPER_WAIT_MS on
 * one step), or an error; then the part copied is removed and the source
 * left whole.
 */
int fshelper_copy(struct fshelper *h, const char *name, int dst_dirfd, const char *dst_name,
		  const struct fshelper_limits *lim, struct fshelper_copied *done) DP_MUST_CHECK;

/*
 * At the end of a run: the result folder, and the folder above it
 * (.dynprof), removed when empty, as the target's user; -ENOTEMPTY when
 * something is left in the result folder.
 */
int fshelper_drop_result_dir(struct fshelper *h) DP_MUST_CHECK;

/* Remove the folder `name` of the result folder, as the target's user, on its own mount only. */
int fshelper_remove(struct fshelper *h, const char *name) DP_MUST_CHECK;

#endif /* DYNPROF_FSHELPER_H */
