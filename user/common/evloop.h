/* SPDX-License-Identifier: MIT */
/*
 * The one poll loop's registry of event sources (what redis' ae or a
 * service's handler table does): each source says which fds it waits on,
 * when it next needs a turn, and what it does with an fd that is ready.
 *
 * The loop knows no kind of source. A round polls every source's fds at
 * once, then runs the sources in the order they were added: a source's
 * `round` (every round, ready or not: a tracker reading quiet kernel
 * events) and its `event` for each of its ready fds. An event that
 * returns true ends the round there (a signal: the run is ending, what
 * else was ready waits for the shutdown).
 *
 * Nothing here blocks except the poll, whose timeout is the soonest any
 * source asked for; a source that must wait on something slow (a target's
 * helper, a copy) waits on an fd of its own here, never inside its event.
 */
#ifndef DYNPROF_EVLOOP_H
#define DYNPROF_EVLOOP_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/compiler.h"

struct evloop_source {
	const char *name; /* for the docs and the tests: "signals", "targets", ... */
	void *ctx;
	/* At most how many fds it may give this round (fds is called with room for them). */
	int (*room)(void *ctx);
	/* Its fds for this round (an fd of -1 is skipped by poll); how many it wrote. */
	int (*fds)(void *ctx, struct pollfd *pfds, int max);
	/* One of its fds is ready; true ends the round here. NULL: the fd only wakes the loop. */
	bool (*event)(void *ctx, const struct pollfd *pfd);
	/* Every round, before its events. */
	void (*round)(void *ctx);
	/* Milliseconds until it needs a turn with nothing ready; -1: never. */
	int64_t (*timeout_ms)(void *ctx);
};

#define EVLOOP_MAX_SOURCES 16

struct evloop {
	struct evloop_source src[EVLOOP_MAX_SOURCES];
	int nsrc;
	struct pollfd *pfds; /* room for every fd of a round: grows with the sources' room */
	int *first;          /* per source, its first pollfd this round (nsrc + 1 entries) */
	size_t cap;
};

/* Add a source after those added before it; -ENOSPC past EVLOOP_MAX_SOURCES. */
int evloop_add(struct evloop *l, const struct evloop_source *s) DP_MUST_CHECK;

/* The soonest timeout of the sources (-1: none asked). */
int evloop_timeout_ms(const struct evloop *l);

/*
 * One round: poll every source's fds, then run the sources (see above).
 * 0, -ENOMEM (no room for the fds: nothing was polled), or -errno of a
 * failed poll (EINTR included: nothing was run).
 */
int evloop_round(struct evloop *l) DP_MUST_CHECK;

void evloop_free(struct evloop *l);

#endif /* DYNPROF_EVLOOP_H */
