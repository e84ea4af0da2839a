// SPDX-License-Identifier: MIT
/*
 * discover's fallback without BPF (not root, no BTF, BPF locked down,
 * --no-bpf): one pidfd per watched pid in an epoll set. A pidfd polls
 * readable once its thread group has exited, so an exit is seen when the
 * process is a zombie (later than BPF sees it: discover.h). No tracking
 * events: a tracking handle only watches.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "kernel/discover_impl.h"
#include "kernel/pidfd.h"
#include "kernel/watchset.h"

struct discover_be {
	int epfd;            /* epoll set of the pidfds */
	struct watchset set; /* each entry's pidfd is in the set */
};

static int be_open(struct discover_be **out, bool tracking, char *why, size_t why_len)
{
	struct discover_be *be = calloc(1, sizeof(*be));

	(void)tracking;
	(void)why;
	(void)why_len;
	if (!be)
		return -ENOMEM;
	be->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (be->epfd < 0) {
		int err = -errno;

		free(be);
		return err;
	}
	*out = be;
	return 0;
}

static void be_close(struct discover_be *be)
{
	for (size_t i = 0; i < be->set.n; i++)
		close(be->set.w[i].pidfd);
	watchset_free(&be->set);
	close(be->epfd);
	free(be);
}

/* Stop watching entry i: out of the epoll set, closed, out of the table. */
static void drop(struct discover_be *be, size_t i)
{
	int fd = be->set.w[i].pidfd;

	epoll_ctl(be->epfd, EPOLL_CTL_DEL, fd, NULL);
	close(fd);
	watchset_remove(&be->set, i);
}

static int be_watch(struct discover_be *be, int pid)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = (uint32_t)pid };
	int fd, err;

	if (watchset_find(&be->set, pid) >= 0)
		return 0;
	fd = pidfd_of(pid);
	if (fd < 0)
		return fd;
	if (pidfd_exited(fd)) {
		close(fd);
		return -ESRCH;
	}
	err = watchset_add(&be->set, pid, fd);
	if (err) {
		close(fd);
		return err;
	}
	if (epoll_ctl(be->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
		err = -errno;
		close(fd);
		watchset_remove(&be->set, be->set.n - 1);
		return err;
	}
	return 0;
}

static void be_unwatch(struct discover_be *be, int pid)
{
	ssize_t i = watchset_find(&be->set, pid);

	if (i >= 0)
		drop(be, (size_t)i);
}

static int be_fd(const struct discover_be *be)
{
	return be->epfd;
}

static int be_consume(struct discover_be *be, void (*on_exit)(void *ctx, int pid), void *ctx)
{
	struct epoll_event ev[64];
	/* Each full batch reports or skips 64 distinct pidfds: this many suffice. */
	int rounds = DP_MAX_WATCHED / 64 + 2;
	int reported = 0;

	while (rounds-- > 0) {
		int k = epoll_wait(be->epfd, ev, 64, 0);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (int j = 0; j < k; j++) {
			int pid = (int)ev[j].data.u64;
			ssize_t i = watchset_find(&be->set, pid);

			/* Recheck: on_exit may have unwatched or rewatched it. */
			if (i < 0 || !pidfd_exited(be->set.w[i].pidfd))
				continue;
			drop(be, (size_t)i);
			reported++;
			if (on_exit)
				on_exit(ctx, pid); /* may change the table */
		}
		if (k < 64)
			break;
	}
	return reported;
}

/* No kernel events without BPF. */
static int be_consume_events(struct discover_be *be,
			     void (*on_event)(void *ctx, const struct dp_event *e), void *ctx)
{
	(void)be;
	(void)on_event;
	(void)ctx;
	return 0;
}

/* No open filter to register with: the process model polls /proc. */
static int be_add_card(struct discover_be *be, unsigned major, unsigned minor, int index)
{
	(void)be;
	(void)major;
	(void)minor;
	(void)index;
	return 0;
}

/* No card opens seen without BPF. */
static const char *be_hook(const struct discover_be *be, bool *closes)
{
	(void)be;
	*closes = false;
	return NULL;
}

static unsigned long long be_lost(const struct discover_be *be)
{
	(void)be;
	return 0;
}

const struct discover_ops discover_pidfd_ops = {
	.open = be_open,
	.close = be_close,
	.watch = be_watch,
	.unwatch = be_unwatch,
	.fd = be_fd,
	.consume = be_consume,
	.consume_events = be_consume_events,
	.add_card = be_add_card,
	.lost = be_lost,
	.hook = be_hook,
};
