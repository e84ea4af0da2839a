// SPDX-License-Identifier: MIT
/* A server's connections its own network namespace does not show (see sockheld.h). */
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kernel/pidfd.h"
#include "sock/sockheld.h"

int sockheld_addr_text(const struct sockaddr_un *a, socklen_t len, char *out, size_t outlen)
{
	size_t n, i = 0, o = 0;

	if (len < (socklen_t)offsetof(struct sockaddr_un, sun_path) || a->sun_family != AF_UNIX)
		return -EINVAL;
	n = (size_t)len - offsetof(struct sockaddr_un, sun_path);
	if (n > sizeof(a->sun_path))
		n = sizeof(a->sun_path);
	if (n == 0)
		return -ENOENT;
	if (a->sun_path[0] == '\0') {
		if (outlen < 2)
			return -ENAMETOOLONG;
		out[o++] = '@';
		i = 1;
	} else {
		/* A path is bound with its NUL counted; print stops at it. */
		n = strnlen(a->sun_path, n);
	}
	for (; i < n; i++) {
		if (o + 1 >= outlen)
			return -ENAMETOOLONG;
		out[o++] = a->sun_path[i] ? a->sun_path[i] : '@';
	}
	if (o >= outlen)
		return -ENAMETOOLONG;
	out[o] = '\0';
	return 0;
}

/* 1: the copy is an accepted socket on `path` whose client is still there. */
static int copy_is_live_client(int copy, unsigned long ino, const char *path)
{
	struct sockaddr_un a;
	socklen_t alen = sizeof(a), olen = sizeof(int);
	struct pollfd p = { .fd = copy };
	char text[sizeof(a.sun_path) + 2];
	struct stat st;
	int v;

	/* Most of a process's other sockets are TCP: refused by the first call. */
	if (getsockopt(copy, SOL_SOCKET, SO_DOMAIN, &v, &olen) < 0 || v != AF_UNIX)
		return 0;
	/* The fd number may have been closed and reused since its link was read. */
	if (fstat(copy, &st) < 0 || (unsigned long)st.st_ino != ino)
		return 0;
	olen = sizeof(int);
	if (getsockopt(copy, SOL_SOCKET, SO_ACCEPTCONN, &v, &olen) < 0 || v)
		return 0;
	memset(&a, 0, sizeof(a));
	if (getsockname(copy, (struct sockaddr *)&a, &alen) < 0 ||
	    sockheld_addr_text(&a, alen, text, sizeof(text)) || strcmp(text, path))
		return 0;
	/* No event asked: POLLHUP comes by itself, and nothing is read. */
	return poll(&p, 1, 0) >= 0 && !(p.revents & POLLHUP);
}

int sockheld_live_client(int pid, const struct sockheld_fd *fds, int n, const char *path)
{
	int pidfd, rc = 0;

	if (n == 0)
		return 0; /* no pidfd to make: the usual case, a server no one holds */
	pidfd = pidfd_of(pid);
	if (pidfd < 0)
		return pidfd;
	for (int i = 0; i < n && rc == 0; i++) {
		int copy = (int)syscall(SYS_pidfd_getfd, pidfd, fds[i].fd, 0);

		if (copy < 0) {
			if (errno != EBADF) /* EBADF: closed meanwhile */
				rc = -errno;
			continue;
		}
		rc = copy_is_live_client(copy, fds[i].ino, path);
		close(copy);
	}
	close(pidfd);
	return rc;
}
