// SPDX-License-Identifier: MIT
/* Card opens waiting for their confirmation (see opencheck.h). */
#include <errno.h>
#include <stdlib.h>

#include "model/opencheck.h"

struct pending {
	struct dp_event ev;
	int64_t since_ms; /* when it came */
	int64_t next_ms;  /* next try */
	int step_ms;      /* the wait after the last try */
};

struct opencheck {
	struct pending *p;
	size_t n, cap;
};

struct opencheck *opencheck_new(void)
{
	return calloc(1, sizeof(struct opencheck));
}

void opencheck_free(struct opencheck *c)
{
	if (!c)
		return;
	free(c->p);
	free(c);
}

static bool same_open(const struct dp_event *a, const struct dp_event *b)
{
	return a->pid == b->pid && a->start_ns == b->start_ns && a->rdev_major == b->rdev_major &&
	       a->rdev_minor == b->rdev_minor;
}

int opencheck_add(struct opencheck *c, const struct dp_event *ev, int64_t now_ms)
{
	for (size_t i = 0; i < c->n; i++)
		if (same_open(&c->p[i].ev, ev))
			return 0;
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 16;
		struct pending *p;

		if (c->n >= OPENCHECK_MAX)
			return -ENOSPC;
		if (cap > OPENCHECK_MAX)
			cap = OPENCHECK_MAX;
		p = realloc(c->p, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		c->p = p;
		c->cap = cap;
	}
	c->p[c->n] =
		(struct pending){ .ev = *ev, .since_ms = now_ms, .next_ms = now_ms + 1, .step_ms = 1 };
	c->n++;
	return 0;
}

/* Entry i is done: the last one takes its place (the order does not matter). */
static void take_out(struct opencheck *c, size_t i)
{
	c->p[i] = c->p[--c->n];
}

void opencheck_run(struct opencheck *c, struct procmodel *m, int64_t now_ms)
{
	for (size_t i = c->n; i-- > 0;) {
		struct pending *p = &c->p[i];
		int rc;

		if (now_ms < p->next_ms)
			continue;
		rc = procmodel_confirm_open(m, &p->ev);
		if (rc != 0 && rc != -EACCES) { /* confirmed, or gone */
			take_out(c, i);
			continue;
		}
		if (now_ms - p->since_ms >= OPENCHECK_GIVE_UP_MS) {
			take_out(c, i); /* failed, or closed before it was seen */
			continue;
		}
		p->step_ms = p->step_ms * 2 > OPENCHECK_STEP_MAX_MS ? OPENCHECK_STEP_MAX_MS :
								      p->step_ms * 2;
		p->next_ms = now_ms + p->step_ms;
	}
}

int64_t opencheck_next_ms(const struct opencheck *c)
{
	int64_t next = INT64_MAX;

	for (size_t i = 0; i < c->n; i++)
		if (c->p[i].next_ms < next)
			next = c->p[i].next_ms;
	return next;
}

size_t opencheck_waiting(const struct opencheck *c)
{
	return c->n;
}
