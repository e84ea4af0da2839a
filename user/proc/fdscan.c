// SPDX-License-Identifier: MIT
/* The open files of a process (see fdscan.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc/fdscan.h"
#include "shared/decimal.h"

static int parse_fd(const char *name)
{
	int v;

	return decimal_int(name, 0, INT_MAX, &v) ? -1 : v;
}

/* One buffer of entries; returns the callback's stop value or 0. */
static int walk_entries(int dfd, const char *buf, ssize_t n, fdscan_fn fn, void *ctx, int *seen)
{
	char target[PATH_MAX];

	for (ssize_t off = 0; off < n && *seen < FDSCAN_MAX;) {
		const struct dirent64 *de = (const void *)(buf + off);
		int fd = parse_fd(de->d_name), rc;
		ssize_t len;

		off += de->d_reclen;
		if (fd < 0)
			continue; /* "." and ".." */
		(*seen)++;
		len = readlinkat(dfd, de->d_name, target, sizeof(target) - 1);
		if (len <= 0)
			continue; /* closed meanwhile */
		target[len] = '\0';
		rc = fn(ctx, dfd, de->d_name, fd, target);
		if (rc)
			return rc;
	}
	return 0;
}

int fdscan(int piddir, fdscan_fn fn, void *ctx)
{
	char buf[8192] __attribute__((aligned(8)));
	int dfd, rc = 0, seen = 0;

	dfd = openat(piddir, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	while (!rc && seen < FDSCAN_MAX) {
		/* getdents64, not a DIR: no malloc, no fcntl, for one short walk per process. */
		ssize_t n = getdents64(dfd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* The process exited during the walk: its fds are gone with it. */
			if (n < 0)
				rc = errno == ENOENT ? -ESRCH : -errno;
			break;
		}
		rc = walk_entries(dfd, buf, n, fn, ctx, &seen);
	}
	close(dfd);
	return rc;
}

unsigned long fdscan_socket_inode(const char *target)
{
	const char *p = target + 8;
	uint64_t v;
	size_t n;

	if (strncmp(target, "socket:[", 8) || decimal_prefix(p, SIZE_MAX, ULONG_MAX, &v, &n))
		return 0;
	return p[n] == ']' && p[n + 1] == '\0' ? (unsigned long)v : 0;
}
