/* SPDX-License-Identifier: MIT */
/*
 * Files beneath a root folder: a target's root, --output, a PROF_ folder.
 * Every such file is untrusted: opened beneath the folder, never blocking,
 * regular files only, read bounded. Not /proc facts: config/chip.c reads
 * info.json through these as proc/ and sock/ read a target's passwd.
 */
#ifndef DYNPROF_COMMON_ROOTFILE_H
#define DYNPROF_COMMON_ROOTFILE_H

#include <stddef.h>

#include "shared/compiler.h"

/*
 * Open `path` inside the folder `rootfd` as if it were "/": absolute
 * symlinks and ".." resolve inside it and cannot leave it, magic /proc
 * links are refused (openat2 RESOLVE_IN_ROOT|RESOLVE_NO_MAGICLINKS).
 * O_CLOEXEC is always added. Returns the fd or a negative errno. On kernels
 * without openat2 (before 5.6) it falls back to a plain openat of the
 * relative path, where absolute symlinks resolve against dynprof's own root:
 * callers that need trust must verify what they reach by other means
 * (target_socket checks SO_PEERCRED).
 */
int rootfile_open_in(int rootfd, const char *path, int flags) DP_MUST_CHECK;

/*
 * Read an open file to its end into a new NUL-terminated buffer (*buf,
 * freed by the caller; *len bytes without the NUL). -EFBIG when it holds
 * more than `max` bytes (nothing is returned then).
 */
int rootfile_read(int fd, size_t max, char **buf, size_t *len) DP_MUST_CHECK;

/*
 * Every file dynprof reads in a target's filesystem is opened through this:
 * rootfile_open_in() with O_RDONLY|O_NONBLOCK|O_NOFOLLOW|O_NOCTTY, then
 * an fstat type check, so a FIFO, a device or a socket put (or
 * bind-mounted) in its place never blocks or is read. Returns the fd of a
 * regular file; -ELOOP when the last part is a symlink; -ROOTFILE_ENOTREG
 * (negated) when it is not a regular file; else a negative errno.
 * rootfile_check_regular() is the type check alone: it takes an fd (or a
 * negative errno, passed back), closes it when refused.
 */
#define ROOTFILE_ENOTREG EMEDIUMTYPE /* Linux has no EFTYPE; callers name it themselves */
int rootfile_open(int rootfd, const char *path) DP_MUST_CHECK;
int rootfile_check_regular(int fd) DP_MUST_CHECK;
/* strerror(-err), naming the two refusals above in words. */
const char *rootfile_strerror(int err);

#endif /* DYNPROF_COMMON_ROOTFILE_H */
