// SPDX-License-Identifier: MIT
/* What a file is, from one statx (see fsident.h). */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "common/fsident.h"

int fs_ident_at(int dirfd, const char *name, int flags, struct fs_ident *id)
{
	struct statx sx;

	if (statx(dirfd, name, flags | AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT,
		  STATX_TYPE | STATX_MODE | STATX_INO | STATX_SIZE | STATX_MNT_ID, &sx))
		return -errno;
	id->mode = sx.stx_mode;
	id->size = (off_t)sx.stx_size;
	id->dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
	id->ino = sx.stx_ino;
	id->mnt = sx.stx_mask & STATX_MNT_ID ? sx.stx_mnt_id : 0;
	return 0;
}

bool fs_ident_same_mount(const struct fs_ident *a, const struct fs_ident *b)
{
	return a->dev == b->dev && (!a->mnt || !b->mnt || a->mnt == b->mnt);
}

uint64_t fs_mount_of(int fd)
{
	struct statx sx;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &sx) || !(sx.stx_mask & STATX_MNT_ID))
		return 0;
	return sx.stx_mnt_id;
}
