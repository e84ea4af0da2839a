/* SPDX-License-Identifier: MIT */
/*
 * What a file is, from one statx: enough to tell whether a name still
 * names the entry looked at (not swapped in between) and whether it is on
 * the mount it should be (a bind mount defeats AT_SYMLINK_NOFOLLOW; only
 * the mount id tells it from the folder it covers). The one statx wrapper
 * of user/: the copy of a window's folder (results/copytree.c), the helper
 * in a target's namespaces (ns/fshelper_child.c), the session's folders.
 * Only syscalls: usable in a forked child.
 */
#ifndef DYNPROF_FSIDENT_H
#define DYNPROF_FSIDENT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "shared/compiler.h"

struct fs_ident {
	mode_t mode;
	off_t size;
	dev_t dev;
	ino_t ino;
	uint64_t mnt; /* mount id; 0: the kernel does not tell (before 5.8) */
};

/*
 * `name` under dirfd (flags: 0, or AT_EMPTY_PATH with "" for dirfd
 * itself), never following a final symlink nor triggering an automount.
 * 0 or a negative errno.
 */
int fs_ident_at(int dirfd, const char *name, int flags, struct fs_ident *id) DP_MUST_CHECK;

/* The same mount: the same device and, when both are known, the same mount id. */
bool fs_ident_same_mount(const struct fs_ident *a, const struct fs_ident *b);

/* The mount id of an open fd; 0 when the kernel does not tell (before 5.8) or statx fails. */
uint64_t fs_mount_of(int fd);

#endif /* DYNPROF_FSIDENT_H */
