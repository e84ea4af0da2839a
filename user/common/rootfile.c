// SPDX-License-Identifier: MIT
/* Files beneath a root folder fd, opened and read as untrusted (see rootfile.h). */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/rootfile.h"

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

static ssize_t read_retry(int fd, void *buf, size_t len)
{
	for (;;) {
		ssize_t n = read(fd, buf, len);

		if (n >= 0 || errno != EINTR)
			return n < 0 ? -errno : n;
	}
}

int rootfile_read(int fd, size_t max, char **buf, size_t *len)
{
	size_t cap = max < 4096 ? max + 1 : 4096, used = 0;
	char *p = malloc(cap);

	*buf = NULL;
	*len = 0;
	if (!p)
		return -ENOMEM;
	for (;;) {
		ssize_t n;

		if (used + 1 >= cap) {
			size_t ncap;
			char *np;

			if (used > max) {
				free(p);
				return -EFBIG;
			}
			ncap = cap * 2 > max + 2 ? max + 2 : cap * 2;
			np = realloc(p, ncap);
			if (!np) {
				free(p);
				return -ENOMEM;
			}
			p = np;
			cap = ncap;
		}
		n = read_retry(fd, p + used, cap - 1 - used);
		if (n < 0) {
			free(p);
			return (int)n;
		}
		if (n == 0)
			break;
		used += (size_t)n;
	}
	if (used > max) {
		free(p);
		return -EFBIG;
	}
	p[used] = '\0';
	*buf = p;
	*len = used;
	return 0;
}

int rootfile_open_in(int rootfd, const char *path, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC),
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	long fd;

	/* EAGAIN: a concurrent rename raced the ".." checks; try again. */
	for (int tries = 0; tries < 8; tries++) {
		fd = syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
		if (fd >= 0)
			return (int)fd;
		if (errno != EAGAIN && errno != EINTR)
			break;
	}
	if (errno != ENOSYS)
		return -errno;

	/* Before Linux 5.6: a plain openat, relative to the root fd. */
	while (*path == '/')
		path++;
	fd = openat(rootfd, *path ? path : ".", flags | O_CLOEXEC);
	return fd < 0 ? -errno : (int)fd;
}

int rootfile_check_regular(int fd)
{
	struct stat st;

	if (fd < 0)
		return fd;
	if (fstat(fd, &st)) {
		int err = -errno;

		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return -ROOTFILE_ENOTREG;
	}
	return fd;
}

int rootfile_open(int rootfd, const char *path)
{
	/*
	 * O_NONBLOCK: a FIFO opens at once instead of waiting for a writer (and
	 * reads give EAGAIN); it is then refused by its type before any read.
	 * O_NOCTTY: a terminal put there never becomes ours.
	 */
	int fd = rootfile_open_in(rootfd, path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY);

	return rootfile_check_regular(fd);
}

const char *rootfile_strerror(int err)
{
	if (err == -ROOTFILE_ENOTREG)
		return "not a regular file, refused";
	if (err == -ELOOP)
		return "a symlink, not followed";
	return strerror(-err);
}
