// SPDX-License-Identifier: MIT
/* Whole-message socket I/O with deadlines (see user/shared/fdio.h). */
#include <errno.h>
#include <poll.h>
#include <sys/socket.h>

#include "shared/fdio.h"

static int wait_for(int fd, short events, int64_t deadline)
{
	struct pollfd pfd = { .fd = fd, .events = events };

	for (;;) {
		int n = poll(&pfd, 1, clock_ms_left(deadline));

		if (n > 0)
			return 1;
		if (n == 0)
			return 0;
		if (errno != EINTR)
			return -errno;
	}
}

int fdio_wait_readable(int fd, int64_t deadline)
{
	return wait_for(fd, POLLIN, deadline);
}

int fdio_write_full(int fd, const void *buf, size_t len, int64_t deadline)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		n = wait_for(fd, POLLOUT, deadline);
		if (n <= 0)
			return n == 0 ? -ETIMEDOUT : (int)n;
	}
	return 0;
}

int fdio_read_full(int fd, void *buf, size_t len, int64_t deadline, size_t *got)
{
	char *p = buf;
	size_t done = 0;
	int rc = 0;

	while (done < len) {
		ssize_t n = recv(fd, p + done, len - done, MSG_DONTWAIT);

		if (n > 0) {
			done += (size_t)n;
			continue;
		}
		if (n == 0) {
			rc = done ? -EPROTO : -ECONNRESET;
			break;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			rc = -errno;
			break;
		}
		n = wait_for(fd, POLLIN, deadline);
		if (n <= 0) {
			rc = n == 0 ? -ETIMEDOUT : (int)n;
			break;
		}
	}
	if (got)
		*got = done;
	return rc;
}
