// SPDX-License-Identifier: MIT
/*
 * Kernel events about processes (see discover.h): the API, and the table
 * of watched pids that both attach-mode back ends keep, so a pid is
 * reported once, only while watched. The BPF back end (programs in
 * bpf/discover.bpf.c, loaded by discover_bpf.c) also serves tracking mode;
 * the pidfd fallback is in discover_pidfd.c.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "kernel/bpfutil.h"
#include "kernel/discover.h"
#include "kernel/discover_impl.h"
#include "common/grow.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

/* ---- small helpers ------------------------------------------------------ */

/* A pidfd for process pid; -EINVAL when pid is a thread but not a leader. */
int discover_pidfd_open(int pid)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);

	if (fd >= 0)
		return fd;
	/* Before 6.x EINVAL, since ENOENT (seen on 6.18): one answer for callers. */
	return errno == ENOENT ? -EINVAL : -errno;
}

/* A pidfd polls readable once its thread group has exited (zombie or reaped). */
bool discover_pidfd_exited(int pidfd)
{
	struct pollfd pfd = { .fd = pidfd, .events = POLLIN };

	return poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLIN | POLLHUP | POLLERR));
}

/* ---- the table of watched pids ------------------------------------------- */

ssize_t discover_watch_find(const struct discover *d, int pid)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->w[i].pid == pid)
			return (ssize_t)i;
	return -1;
}

int discover_watch_add(struct discover *d, int pid, int pidfd, uint64_t since_ns)
{
	if (d->n >= DP_MAX_WATCHED)
		return -ENOSPC;
	if (grow_for_one((void **)&d->w, &d->cap, d->n, sizeof(*d->w), 16))
		return -ENOMEM;
	d->w[d->n++] = (struct watch){ .pid = pid, .pidfd = pidfd, .since_ns = since_ns };
	return 0;
}

/* Stop watching entry i: out of the kernel map or the epoll set, then the table. */
void discover_watch_drop(struct discover *d, size_t i)
{
	struct watch *w = &d->w[i];

	if (d->skel) {
		discover_bpf_unwatch(d, w->pid);
	} else if (w->pidfd >= 0) {
		epoll_ctl(d->epfd, EPOLL_CTL_DEL, w->pidfd, NULL);
		close(w->pidfd);
	}
	d->w[i] = d->w[--d->n];
}

/* Entry i exited: drop it, then tell the caller (who may change the table). */
void discover_report_exit(struct discover *d, size_t i)
{
	int pid = d->w[i].pid;

	discover_watch_drop(d, i);
	d->reported++;
	if (d->on_exit)
		d->on_exit(d->ctx, pid);
}

/* ---- the API -------------------------------------------------------------- */

static struct discover *open_mode(bool use_bpf, bool tracking, const char **note)
{
	static char note_buf[320];
	struct discover *d = calloc(1, sizeof(*d));
	char why[256];

	if (note)
		*note = NULL;
	if (!d)
		return NULL;
	d->epfd = -1;
	d->tracking = tracking;

	if (use_bpf && discover_bpf_setup(d, why, sizeof(why)) != 0) {
		/* A tracking caller (tracker.c) says itself what it uses instead. */
		snprintf(note_buf, sizeof(note_buf), "BPF unavailable (%s)%s", why,
			 tracking ? "" : ": watching targets with pidfds");
		if (note)
			*note = note_buf;
	}
	/*
	 * Without BPF: the epoll set of the pidfd fallback. A tracking handle
	 * gets one too: its fd then never polls readable unless pids are
	 * watched, and discover_consume_events() delivers nothing.
	 */
	if (!d->skel) {
		d->epfd = epoll_create1(EPOLL_CLOEXEC);
		if (d->epfd < 0) {
			int err = errno;

			discover_close(d);
			errno = err;
			return NULL;
		}
	}
	return d;
}

struct discover *discover_open(bool use_bpf, const char **note)
{
	return open_mode(use_bpf, false, note);
}

struct discover *discover_open_tracking(bool use_bpf, const char **note)
{
	return open_mode(use_bpf, true, note);
}

void discover_close(struct discover *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++)
		if (d->w[i].pidfd >= 0)
			close(d->w[i].pidfd);
	free(d->w);
	discover_bpf_teardown(d);
	if (d->epfd >= 0)
		close(d->epfd);
	if (d->print_set)
		bpfutil_quiet_release();
	free(d);
}

bool discover_uses_bpf(const struct discover *d)
{
	return d && d->skel;
}

int discover_watch(struct discover *d, int pid)
{
	if (!d || pid <= 0)
		return -EINVAL;
	if (discover_watch_find(d, pid) >= 0)
		return 0;
	return d->skel ? discover_bpf_watch(d, pid) : discover_pidfd_watch(d, pid);
}

void discover_unwatch(struct discover *d, int pid)
{
	ssize_t i = d ? discover_watch_find(d, pid) : -1;

	if (i >= 0)
		discover_watch_drop(d, (size_t)i);
}

int discover_fd(const struct discover *d)
{
	if (!d)
		return -EINVAL;
	return d->skel ? discover_bpf_fd(d) : d->epfd;
}

int discover_consume(struct discover *d, void (*on_exit)(void *ctx, int pid), void *ctx)
{
	int err;

	if (!d)
		return -EINVAL;
	d->on_exit = on_exit;
	d->ctx = ctx;
	d->reported = 0;
	err = d->skel ? discover_bpf_consume(d) : discover_pidfd_consume(d);
	d->on_exit = NULL;
	d->ctx = NULL;
	return err ? err : d->reported;
}

int discover_consume_events(struct discover *d,
			    void (*on_event)(void *ctx, const struct dp_event *e), void *ctx)
{
	int err;

	if (!d || !on_event)
		return -EINVAL;
	if (!d->skel)
		return 0; /* no kernel events without BPF */
	d->on_event = on_event;
	d->ev_ctx = ctx;
	d->delivered = 0;
	err = discover_bpf_consume(d);
	d->on_event = NULL;
	d->ev_ctx = NULL;
	return err ? err : d->delivered;
}

int discover_add_card(struct discover *d, unsigned major, unsigned minor, int index)
{
	if (!d || index < 0 || !d->tracking)
		return -EINVAL; /* attach mode loads no open filter */
	/* The kernel's dev_t: 12 bits of major, 20 of minor. */
	if (major >= 1U << 12 || minor >= 1U << 20)
		return -ERANGE;
	return d->skel ? discover_bpf_add_card(d, major, minor, index) : 0;
}

unsigned long long discover_lost_events(const struct discover *d)
{
	return d ? discover_bpf_lost(d) : 0;
}
