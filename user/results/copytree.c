// SPDX-License-Identifier: MIT
/* Moving a folder tree across filesystems (see copytree.h). */
#include <dirent.h>
#include <signal.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/fsident.h"
#include "results/copytree.h"

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

#define COPY_MAX_DEPTH 40

/*
 * The window folder's own file system and mount: nothing on another one is
 * copied or removed (a target may bind-mount anything it can name, even a
 * root-only folder, into its window), and only regular files and folders
 * are handled. `skipped` counts what was left for that reason.
 */
struct tree {
	dev_t dev;
	uint64_t mnt_id; /* 0: the kernel does not tell (before 5.8): dev alone */
	int skipped;
	unsigned long long left; /* data bytes the window may still hold (its size limit) */
};

/*
 * SIGINT, SIGTERM or SIGHUP waiting: dynprof takes signals through a
 * signalfd (they are blocked), so a long copy looks at them itself between
 * chunks and gives up (-EINTR): they are then handled within a chunk's time.
 */
bool copytree_signal_pending(void)
{
	sigset_t pending;

	return sigpending(&pending) == 0 &&
	       (sigismember(&pending, SIGINT) == 1 || sigismember(&pending, SIGTERM) == 1 ||
		sigismember(&pending, SIGHUP) == 1);
}

/* On the window folder's mount (a mount point's name reads as the mounted root). */
static bool on_tree(const struct tree *t, const struct fs_ident *e)
{
	return e->dev == t->dev && (!t->mnt_id || !e->mnt || e->mnt == t->mnt_id);
}

/* The open fd is the entry looked at, on the tree: not swapped since. */
static bool fd_is(int fd, const struct tree *t, const struct fs_ident *e)
{
	struct fs_ident now = { 0 };

	return fs_ident_at(fd, "", AT_EMPTY_PATH, &now) == 0 && on_tree(t, &now) &&
	       now.ino == e->ino && now.dev == e->dev && (now.mode & S_IFMT) == (e->mode & S_IFMT);
}

/*
 * Open a name in dirfd without following a symlink or crossing a mount
 * (openat2 RESOLVE_BENEATH|RESOLVE_NO_XDEV where the kernel has it; else
 * O_NOFOLLOW, the checks of fd_is() doing the rest).
 */
static int open_beneath(int dirfd, const char *name, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC),
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_XDEV | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	long fd;

	for (int tries = 0; tries < 8; tries++) {
		fd = syscall(SYS_openat2, dirfd, name, &how, sizeof(how));
		if (fd >= 0)
			return (int)fd;
		if (errno != EAGAIN && errno != EINTR)
			break;
	}
	if (errno != ENOSYS)
		return -1;
	return openat(dirfd, name, flags | O_NOFOLLOW | O_CLOEXEC);
}

/* Copy [from, to) of in to the same offsets of out, within the limit. */
static int copy_range(struct tree *t, int in, int out, off_t from, off_t to)
{
	char buf[65536];
	int rc = 0;

	if (lseek(in, from, SEEK_SET) < 0 || lseek(out, from, SEEK_SET) < 0)
		return -errno;
	while (rc == 0 && from < to) {
		size_t want = (size_t)(to - from) < sizeof(buf) ? (size_t)(to - from) : sizeof(buf);
		ssize_t n;

		if (copytree_signal_pending())
			return -EINTR;
		if (want > t->left)
			return -EFBIG;
		n = read(in, buf, want);

		if (n == 0)
			break; /* shrank while being read */
		if (n < 0) {
			rc = errno == EINTR ? 0 : -errno;
			continue;
		}
		t->left -= (unsigned long long)n;
		from += n;
		for (ssize_t off = 0; off < n && rc == 0;) {
			ssize_t w = write(out, buf + off, (size_t)(n - off));

			if (w < 0 && errno != EINTR)
				rc = -errno;
			off += w > 0 ? w : 0;
		}
	}
	return rc;
}

/*
 * Copy a regular file's data segments only (SEEK_DATA/SEEK_HOLE): a sparse
 * file stays sparse, its holes neither read nor counted against the limit.
 * A file system without SEEK_DATA reads as one segment.
 */
static int copy_bytes(struct tree *t, int in, int out, off_t size)
{
	off_t pos = 0;
	int rc = 0;

	while (rc == 0 && pos < size) {
		off_t data = lseek(in, pos, SEEK_DATA), hole;

		if (data < 0 && errno == ENXIO)
			break; /* only a hole from here */
		if (data < 0) {
			data = pos;
			hole = size;
		} else {
			hole = lseek(in, data, SEEK_HOLE);
			if (hole < 0 || hole > size)
				hole = size;
		}
		rc = copy_range(t, in, out, data, hole);
		pos = hole;
	}
	if (rc == 0 && ftruncate(out, size))
		rc = -errno;
	return rc;
}

static int copy_file(struct tree *t, int sdir, int ddir, const char *name, const struct fs_ident *e)
{
	/* O_NONBLOCK: the name may have become a FIFO or device since it was looked at. */
	int in = open_beneath(sdir, name, O_RDONLY | O_NONBLOCK | O_NOCTTY), out, rc;

	if (in < 0 && (errno == EXDEV || errno == ELOOP || errno == ENXIO)) {
		t->skipped++;
		return 0;
	}
	if (in < 0)
		return -errno;
	if (!fd_is(in, t, e)) {
		close(in);
		t->skipped++;
		return 0; /* swapped, or not a regular file any more: skipped, as at the look */
	}
	out = openat(ddir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, e->mode & 0777);
	rc = out < 0 ? -errno : copy_bytes(t, in, out, e->size);
	close(in);
	if (out >= 0 && close(out) && rc == 0)
		rc = -errno;
	return rc;
}

static int copy_dir(struct tree *t, int sdir, int ddir, int depth);

static int copy_entry(struct tree *t, int sdir, int ddir, const char *name, int depth)
{
	struct fs_ident e;
	int s, d, rc;

	rc = fs_ident_at(sdir, name, 0, &e);
	if (rc)
		return rc == -ENOENT ? 0 : rc;
	if (!on_tree(t, &e) || !(S_ISREG(e.mode) || S_ISDIR(e.mode))) {
		t->skipped++; /* a mount; symlinks, sockets, devices: not part of a result */
		return 0;
	}
	if (S_ISREG(e.mode))
		return copy_file(t, sdir, ddir, name, &e);
	s = open_beneath(sdir, name, O_RDONLY | O_DIRECTORY);
	if (s < 0 || !fd_is(s, t, &e)) {
		rc = s < 0 && errno != EXDEV && errno != ELOOP && errno != ENOTDIR ? -errno : 0;
		t->skipped += rc == 0;
		if (s >= 0)
			close(s);
		return rc;
	}
	if (mkdirat(ddir, name, e.mode & 0777) && errno != EEXIST) {
		close(s);
		return -errno;
	}
	d = openat(ddir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	rc = d < 0 ? -errno : copy_dir(t, s, d, depth + 1);
	close(s);
	if (d >= 0)
		close(d);
	return rc;
}

/* Copy the contents of sdir into ddir; closes neither. */
static int copy_dir(struct tree *t, int sdir, int ddir, int depth)
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
			rc = copytree_signal_pending() ? -EINTR :
							 copy_entry(t, sdir, ddir, de->d_name, depth);
	closedir(dir);
	return rc;
}

static int remove_dir(struct tree *t, int parent, const char *name, const struct fs_ident *e, int depth);

/*
 * One pass over dirfd removing what it sees; *removed counts the entries.
 * Only what is on the tree's own mount: a mount point (a bind-mounted
 * folder or file) and all below it are left alone. Other names (symlinks,
 * FIFOs) are unlinked, which never follows them.
 */
static int remove_pass(struct tree *t, int dirfd, int depth, int *removed)
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
		struct fs_ident e;
		int err;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		err = fs_ident_at(dirfd, de->d_name, 0, &e);
		if (err) {
			rc = err == -ENOENT ? 0 : err;
			continue;
		}
		if (!on_tree(t, &e))
			continue; /* left alone (counted when it was not copied) */
		if (S_ISDIR(e.mode))
			rc = remove_dir(t, dirfd, de->d_name, &e, depth + 1);
		else if (unlinkat(dirfd, de->d_name, 0))
			rc = errno == ENOENT ? 0 : -errno;
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
static int remove_contents(struct tree *t, int dirfd, int depth)
{
	int removed = 1, rc = 0;

	for (int pass = 0; rc == 0 && removed && pass < 64; pass++)
		rc = remove_pass(t, dirfd, depth, &removed);
	return rc;
}

/* A folder that still holds what was left alone stays: not an error. */
static int remove_dir(struct tree *t, int parent, const char *name, const struct fs_ident *e, int depth)
{
	int fd, rc;

	if (depth > COPY_MAX_DEPTH)
		return -ELOOP;
	fd = open_beneath(parent, name, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return errno == ENOENT ? 0 : errno == EXDEV || errno == ELOOP ? 0 : -errno;
	if (!fd_is(fd, t, e)) {
		close(fd);
		return 0;
	}
	rc = remove_contents(t, fd, depth);
	close(fd);
	if (rc == 0 && unlinkat(parent, name, AT_REMOVEDIR))
		rc = errno == ENOTEMPTY || errno == EBUSY || errno == EEXIST ?
			     (t->skipped ? 0 : -errno) :
			     -errno;
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

/* Copy the folder open as s into dst (made here), then empty s. */
static int copy_then_remove(int s, const char *dst, unsigned long long max_bytes)
{
	struct tree t = { .left = max_bytes };
	struct fs_ident root;
	int d, rc = fs_ident_at(s, "", AT_EMPTY_PATH, &root);

	if (rc)
		return rc;
	t.dev = root.dev;
	t.mnt_id = root.mnt;
	if (mkdir(dst, 0750))
		return -errno;
	d = open(dst, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	rc = d < 0 ? -errno : copy_dir(&t, s, d, 0);
	if (rc == 0) {
		rc = remove_contents(&t, s, 0);
	} else if (d >= 0) {
		/* Stopped (a signal, the limit, an error): the source stays whole, the part copied goes. */
		struct tree ours = { 0 };
		struct fs_ident me;

		if (fs_ident_at(d, "", AT_EMPTY_PATH, &me) == 0) {
			ours.dev = me.dev;
			ours.mnt_id = me.mnt;
			(void)remove_contents(&ours, d, 0);
			rmdir(dst);
		}
	}
	if (d >= 0)
		close(d);
	return rc ? rc : t.skipped ? 1 : 0;
}

int copytree_move(const char *src, const char *dst, unsigned long long max_bytes)
{
	int s, rc;

	rc = move_by_rename(src, dst);
	if (rc != -EXDEV)
		return rc;
	s = open(src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s < 0)
		return errno == ELOOP ? -ENOTDIR : -errno;
	rc = copy_then_remove(s, dst, max_bytes);
	close(s);
	/* 1: something was left alone (a mount): the folder may stay with it. */
	if (rc >= 0 && rmdir(src) &&
	    !(rc == 1 && (errno == ENOTEMPTY || errno == EBUSY || errno == EEXIST)))
		return -errno;
	return rc == 1 ? 0 : rc;
}

int copytree_remove(int parent, const char *name)
{
	struct tree t = { 0 };
	struct fs_ident e;
	int rc = fs_ident_at(parent, name, 0, &e);

	if (rc)
		return rc == -ENOENT ? 0 : rc;
	if (!S_ISDIR(e.mode))
		return -ENOTDIR;
	t.dev = e.dev;
	t.mnt_id = e.mnt;
	return remove_dir(&t, parent, name, &e, 0);
}
