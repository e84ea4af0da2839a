// SPDX-License-Identifier: MIT
/* The poll loop's registry of sources (see evloop.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/evloop.h"

int evloop_add(struct evloop *l, const struct evloop_source *s)
{
	if (l->nsrc >= EVLOOP_MAX_SOURCES)
		return -ENOSPC;
	l->src[l->nsrc++] = *s;
	return 0;
}

int evloop_timeout_ms(const struct evloop *l)
{
	int64_t ms = -1;

	for (int i = 0; i < l->nsrc; i++) {
		int64_t t = l->src[i].timeout_ms ? l->src[i].timeout_ms(l->src[i].ctx) : -1;

		if (t >= 0 && (ms < 0 || t < ms))
			ms = t;
	}
	return ms > INT32_MAX ? INT32_MAX : (int)ms;
}

/* Room for this round's fds: the sum of the sources' room, grown by doubling. */
static int make_room(struct evloop *l)
{
	size_t need = 0;

	for (int i = 0; i < l->nsrc; i++)
		need += l->src[i].room ? (size_t)l->src[i].room(l->src[i].ctx) : 0;
	if (!l->first) {
		l->first = calloc(EVLOOP_MAX_SOURCES + 1, sizeof(*l->first));
		if (!l->first)
			return -ENOMEM;
	}
	if (need > l->cap || !l->pfds) {
		size_t cap = 2 * need + 1;
		struct pollfd *grown = realloc(l->pfds, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		l->pfds = grown;
		l->cap = cap;
	}
	return 0;
}

static int gather(struct evloop *l)
{
	int n = 0;

	for (int i = 0; i < l->nsrc; i++) {
		const struct evloop_source *s = &l->src[i];
		int room = s->room ? s->room(s->ctx) : 0;

		l->first[i] = n;
		if (room > (int)l->cap - n) /* grew since make_room: what fits is polled */
			room = (int)l->cap - n;
		if (s->fds && room > 0)
			n += s->fds(s->ctx, l->pfds + n, room);
	}
	l->first[l->nsrc] = n;
	return n;
}

/* The sources in order: round, then events, until an event ends the round. */
static void dispatch(struct evloop *l)
{
	for (int i = 0; i < l->nsrc; i++) {
		const struct evloop_source *s = &l->src[i];

		if (s->round)
			s->round(s->ctx);
		for (int k = l->first[i]; k < l->first[i + 1]; k++)
			if (l->pfds[k].revents && s->event && s->event(s->ctx, &l->pfds[k]))
				return;
	}
}

int evloop_round(struct evloop *l)
{
	int n, rc;

	if (make_room(l))
		return -ENOMEM;
	n = gather(l);
	rc = poll(l->pfds, (nfds_t)n, evloop_timeout_ms(l));
	if (rc < 0)
		return -errno;
	dispatch(l);
	return 0;
}

void evloop_free(struct evloop *l)
{
	free(l->pfds);
	free(l->first);
	memset(l, 0, sizeof(*l));
}
