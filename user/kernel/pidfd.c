// SPDX-License-Identifier: MIT
/* Process file descriptors (see pidfd.h). */
#include <errno.h>
#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kernel/pidfd.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

int pidfd_of(int pid)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);

	if (fd >= 0)
		return fd;
	/* Before 6.x EINVAL, since ENOENT (seen on 6.18): one answer for callers. */
	return errno == ENOENT ? -EINVAL : -errno;
}

/* A pidfd polls readable once its thread group has exited. */
bool pidfd_exited(int pidfd)
{
	struct pollfd pfd = { .fd = pidfd, .events = POLLIN };

	return poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLIN | POLLHUP | POLLERR));
}
