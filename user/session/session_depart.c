// SPDX-License-Identifier: MIT
/*
 * Targets whose connection ended, waiting to learn whether their process
 * is exiting (see session.h, session_depart_*). CANN says goodbye from its
 * exit path and its files close before the process becomes a zombie, so
 * a closed connection usually comes a moment before the exit: the target
 * waits up to EXIT_GRACE_MS for it, out of every command and watch, while
 * the loop serves the others.
 */
#include <errno.h>
#include <unistd.h>

#include "kernel/pidfd.h"
#include "proc/procfs.h"
#include "session/session_impl.h"
#include "shared/clock.h"

#define EXIT_GRACE_MS 200
#define PROC_LOOK_MS 5 /* without a pidfd, /proc is read this often */

static void settle(struct session *s, struct target *t, bool gone)
{
	if (t->depart_pidfd >= 0)
		close(t->depart_pidfd);
	t->depart_pidfd = -1;
	t->departing = false;
	session_shape_changed(s);
	s->departures--;
	if (!t->dropped)
		s->departed(s, t, t->depart_kind, gone);
}

/* A pidfd says it exactly; /proc counts a zombie as gone. */
static bool gone_now(const struct target *t)
{
	return t->depart_pidfd >= 0 ? pidfd_exited(t->depart_pidfd) : !procfs_alive(t->pid);
}

void session_depart(struct session *s, struct target *t, enum depart_kind kind,
		    void (*departed)(struct session *s, struct target *t, int kind, bool gone))
{
	int fd;

	s->departed = departed;
	t->departing = true;
	session_shape_changed(s);
	t->depart_kind = kind;
	t->queued = 0; /* nothing more goes out on an ended connection */
	s->departures++;
	target_unwatch_idle(t);
	fd = pidfd_of(t->pid);
	t->depart_pidfd = fd >= 0 ? fd : -1;
	t->depart_by_ms = clock_ms() + EXIT_GRACE_MS;
	if (fd == -ESRCH || gone_now(t))
		settle(s, t, true);
}

void session_depart_gone(struct session *s, struct target *t)
{
	if (t->departing)
		settle(s, t, true);
}

int session_depart_room(const struct session *s)
{
	return s->departures;
}

int session_depart_pollfds(const struct session *s, struct pollfd *pfds, int max)
{
	int n = 0;

	for (int i = 0; s->departures && i < s->ntargets && n < max; i++) {
		const struct target *t = s->targets[i];

		if (t->departing && !t->dropped && t->depart_pidfd >= 0)
			pfds[n++] = (struct pollfd){ .fd = t->depart_pidfd, .events = POLLIN };
	}
	return n;
}

void session_depart_event(struct session *s, const struct pollfd *pfd)
{
	for (int i = 0; s->departures && i < s->ntargets; i++) {
		struct target *t = s->targets[i];

		/* Looked at again: the fd may be another's since an earlier settle this round. */
		if (t->departing && t->depart_pidfd == pfd->fd) {
			if (pidfd_exited(t->depart_pidfd))
				settle(s, t, true);
			return;
		}
	}
}

/* Dropped meanwhile (the run's end), gone, or its time is up; one with a pidfd is looked at only then. */
void session_depart_step(struct session *s)
{
	int64_t now = clock_ms();

	for (int i = 0; s->departures && i < s->ntargets; i++) {
		struct target *t = s->targets[i];
		bool gone;

		if (!t->departing || (t->depart_pidfd >= 0 && !t->dropped && now < t->depart_by_ms))
			continue;
		gone = !t->dropped && gone_now(t);
		if (t->dropped || gone || now >= t->depart_by_ms)
			settle(s, t, gone);
	}
}

int64_t session_depart_timeout_ms(const struct session *s)
{
	int64_t nearest = -1;

	for (int i = 0; s->departures && i < s->ntargets; i++) {
		const struct target *t = s->targets[i];
		int64_t at;

		if (!t->departing)
			continue;
		at = t->depart_pidfd >= 0 ? t->depart_by_ms : clock_ms() + PROC_LOOK_MS;
		if (nearest < 0 || at < nearest)
			nearest = at;
	}
	return nearest < 0 ? -1 : clock_ms_left(nearest);
}

void session_depart_finish(struct session *s)
{
	while (s->departures) {
		struct pollfd p[64];
		int n = session_depart_pollfds(s, p, 64);
		int64_t ms = session_depart_timeout_ms(s);

		if (poll(p, (nfds_t)n, ms < 0 ? 0 : (int)ms) > 0)
			for (int i = 0; i < n; i++)
				if (p[i].revents)
					session_depart_event(s, &p[i]);
		session_depart_step(s);
	}
}
