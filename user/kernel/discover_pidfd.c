// SPDX-License-Identifier: MIT
/*
 * discover's fallback without BPF (not root, no BTF, BPF locked down,
 * --no-bpf): one pidfd per watched pid in an epoll set. A pidfd polls
 * readable once its thread group has exited, so an exit is seen when the
 * process is a zombie (later than BPF sees it: discover.h).
 */
#include <errno.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "kernel/discover_impl.h"
#include "shared/clock.h"

int discover_pidfd_watch(struct discover *d, int pid)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = (uint32_t)pid };
	int fd = discover_pidfd_open(pid);
	int err;

	if (fd < 0)
		return fd;
	if (discover_pidfd_exited(fd)) {
		close(fd);
		return -ESRCH;
	}
	err = discover_watch_add(d, pid, -1, clock_mono_ns());
	if (err) {
		close(fd);
		return err;
	}
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
		err = -errno;
		close(fd);
		d->n--;
		return err;
	}
	d->w[d->n - 1].pidfd = fd;
	return 0;
}

int discover_pidfd_consume(struct discover *d)
{
	struct epoll_event ev[64];
	/* Each full batch reports or skips 64 distinct pidfds: this many suffice. */
	int rounds = DP_MAX_WATCHED / 64 + 2;

	while (rounds-- > 0) {
		int k = epoll_wait(d->epfd, ev, 64, 0);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (int j = 0; j < k; j++) {
			ssize_t i = discover_watch_find(d, (int)ev[j].data.u64);

			/* Recheck: on_exit may have unwatched or rewatched it. */
			if (i >= 0 && discover_pidfd_exited(d->w[i].pidfd))
				discover_report_exit(d, (size_t)i);
		}
		if (k < 64)
			break;
	}
	return 0;
}
