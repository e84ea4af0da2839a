// SPDX-License-Identifier: MIT
/* Moving a folder tree across filesystems (see copytree.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "out/copytree.h"

#define COPY_MAX_DEPTH 16

static int copy_file(int sfd_dir, int dfd_dir, const char *name, mode_t mode)
{
	char buf[65536];
	struct stat st;
	/* The name may have become a FIFO or device since it was looked at. */
	int in = openat(sfd_dir, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	int out = -1, rc = 0;

	if (in >= 0 && (fstat(in, &st) || !S_ISREG(st.st_mode))) {
		close(in);
		return 0; /* not a regular file any more: skipped, as at the look */
	}
	if (in >= 0)
		out = openat(dfd_dir, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode & 0777);
	if (in < 0 || out < 0)
		rc = -errno;
	while (rc == 0) {
		ssize_t n = read(in, buf, sizeof(buf));

		if (n == 0)
			break;
		if (n < 0) {
			rc = errno == EINTR ? 0 : -errno;
			continue;
		}
		for (ssize_t off = 0; off < n && rc == 0;) {
			ssize_t w = write(out, buf + off, (size_t)(n - off));

			if (w < 0 && errno != EINTR)
				rc = -errno;
			off += w > 0 ? w : 0;
		}
	}
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out) && rc == 0)
		rc = -errno;
	return rc;
}

static int copy_dir(int sdir, int ddir, int depth);

static int copy_entry(int sdir, int ddir, const char *name, int depth)
{
	struct stat st;
	int s, d, rc;

	if (fstatat(sdir, name, &st, AT_SYMLINK_NOFOLLOW))
		return -errno;
	if (S_ISREG(st.st_mode))
		return copy_file(sdir, ddir, name, st.st_mode);
	if (!S_ISDIR(st.st_mode))
		return 0; /* symlinks, sockets, devices: not part of a result */
	if (mkdirat(ddir, name, st.st_mode & 0777) && errno != EEXIST)
		return -errno;
	s = openat(sdir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	d = openat(ddir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	rc = s < 0 || d < 0 ? -errno : copy_dir(s, d, depth + 1);
	if (s >= 0)
		close(s);
	if (d >= 0)
		close(d);
	return rc;
}

/* Copy the contents of sdir into ddir; closes neither. */
static int copy_dir(int sdir, int ddir, int depth)
{
	struct dirent *de;
	DIR *dir;
	int fd, rc = 0;

	if (depth > COPY_MAX_DEPTH)
		return -ELOOP;
	fd = dup(sdir);
	dir = fd < 0 ? NULL : fdopendir(fd);
	if (!dir) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	rewinddir(dir); /* the dup shares the caller's offset */
	while (rc == 0 && (de = readdir(dir)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			rc = copy_entry(sdir, ddir, de->d_name, depth);
	closedir(dir);
	return rc;
}

static int remove_dir(int parent, const char *name, int depth);

/* One pass over dirfd removing what it sees; *removed counts the entries. */
static int remove_pass(int dirfd, int depth, int *removed)
{
	struct dirent *de;
	int fd = dup(dirfd), rc = 0;
	DIR *dir = fd < 0 ? NULL : fdopendir(fd);

	*removed = 0;
	if (!dir) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	rewinddir(dir); /* the dup shares the caller's offset */
	while (rc == 0 && (de = readdir(dir))) {
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW))
			rc = -errno;
		else if (S_ISDIR(st.st_mode))
			rc = remove_dir(dirfd, de->d_name, depth + 1);
		else if (unlinkat(dirfd, de->d_name, 0))
			rc = -errno;
		*removed += rc == 0;
	}
	closedir(dir);
	return rc;
}

/*
 * Remove the contents of dirfd. Removing entries while reading a folder
 * may make readdir skip some (tmpfs does), so passes repeat until one
 * finds nothing left.
 */
static int remove_contents(int dirfd, int depth)
{
	int removed = 1, rc = 0;

	for (int pass = 0; rc == 0 && removed && pass < 64; pass++) {
		rc = remove_pass(dirfd, depth, &removed);
	}
	return rc;
}

static int remove_dir(int parent, const char *name, int depth)
{
	int fd, rc;

	if (depth > COPY_MAX_DEPTH)
		return -ELOOP;
	fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	rc = remove_contents(fd, depth);
	close(fd);
	if (rc == 0 && unlinkat(parent, name, AT_REMOVEDIR))
		rc = -errno;
	return rc;
}

/*
 * Rename src to dst, never replacing anything at dst, and only a folder:
 * src is looked at (no symlink followed) before, and what landed at dst is
 * checked to be that very folder after. A symlink or file swapped in
 * between is put back and refused (-ENOTDIR).
 */
static int move_by_rename(const char *src, const char *dst)
{
	struct stat before, after;
	int fd = open(src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return errno == ELOOP ? -ENOTDIR : -errno;
	if (fstat(fd, &before)) {
		close(fd);
		return -errno;
	}
	close(fd);
	if (renameat2(AT_FDCWD, src, AT_FDCWD, dst, RENAME_NOREPLACE))
		return -errno;
	if (lstat(dst, &after) == 0 && S_ISDIR(after.st_mode) && after.st_dev == before.st_dev &&
	    after.st_ino == before.st_ino)
		return 0;
	if (renameat2(AT_FDCWD, dst, AT_FDCWD, src, RENAME_NOREPLACE))
		unlink(dst); /* cannot go back: never leave a non-folder in --output */
	return -ENOTDIR;
}

int copytree_move(const char *src, const char *dst)
{
	int s, d, rc;

	rc = move_by_rename(src, dst);
	if (rc != -EXDEV)
		return rc;
	if (mkdir(dst, 0750))
		return -errno;
	s = open(src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s < 0 && errno == ELOOP)
		errno = ENOTDIR;
	d = open(dst, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	rc = s < 0 || d < 0 ? -errno : copy_dir(s, d, 0);
	if (rc == 0)
		rc = remove_contents(s, 0);
	if (s >= 0)
		close(s);
	if (d >= 0)
		close(d);
	if (rc == 0 && rmdir(src))
		rc = -errno;
	return rc;
}
