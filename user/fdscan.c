// SPDX-License-Identifier: MIT
/* The open files of a process (see fdscan.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fdscan.h"

static int parse_fd(const char *name)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(name, &end, 10);
	if (errno || end == name || *end || v < 0 || v > INT_MAX)
		return -1;
	return (int)v;
}

int fdscan(int piddir, fdscan_fn fn, void *ctx)
{
	char target[PATH_MAX];
	struct dirent *de;
	int dfd, rc = 0, seen = 0;
	DIR *d;

	dfd = openat(piddir, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	d = fdopendir(dfd);
	if (!d) {
		rc = -errno;
		close(dfd);
		return rc;
	}
	while (!rc && seen < FDSCAN_MAX && (de = readdir(d))) {
		int fd = parse_fd(de->d_name);
		ssize_t n;

		if (fd < 0)
			continue; /* "." and ".." */
		seen++;
		n = readlinkat(dfd, de->d_name, target, sizeof(target) - 1);
		if (n <= 0)
			continue; /* closed meanwhile */
		target[n] = '\0';
		rc = fn(ctx, dfd, de->d_name, fd, target);
	}
	closedir(d); /* closes dfd */
	return rc;
}

unsigned long fdscan_socket_inode(const char *target)
{
	const char *p;
	unsigned long v = 0;

	if (strncmp(target, "socket:[", 8))
		return 0;
	for (p = target + 8; *p >= '0' && *p <= '9'; p++) {
		if (v > (~0UL - 9) / 10)
			return 0;
		v = v * 10 + (unsigned long)(*p - '0');
	}
	return *p == ']' && p[1] == '\0' ? v : 0;
}
