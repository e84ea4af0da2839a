// SPDX-License-Identifier: MIT
/* A window's folders brought out beside the loop (see collect.h). */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/clock.h"
#include "results/output.h"
#include "report/report.h"
#include "session/collect.h"

/* On the job's thread: one folder moved (or not), noted for the loop. */
static void moved(void *ctx, const char *prof, const char *dst, int rc,
		  const struct fshelper_copied *copied)
{
	struct collect *c = ctx;
	struct collect_result *r;

	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 8;
		struct collect_result *grown = realloc(c->res, cap * sizeof(*grown));

		if (!grown) {
			c->res_lost = true;
			return;
		}
		c->res = grown;
		c->cap = cap;
	}
	r = &c->res[c->n++];
	snprintf(r->prof, sizeof(r->prof), "%s", prof);
	snprintf(r->dst, sizeof(r->dst), "%s", dst);
	r->rc = rc;
	r->copied = *copied;
}

static void work(struct offloop_job *j)
{
	struct collect *c = (struct collect *)((char *)j - offsetof(struct collect, job));

	fshelper_set_deadline(c->in.h, c->deadline_ms);
	c->list_rc = target_results_collect(&c->in, &c->seen);
	fshelper_set_deadline(c->in.h, 0);
}

/* t's known names gain what the collection found (the loop may have added some meanwhile). */
static void merge_seen(struct collect *c)
{
	char name[NAME_MAX + 1];

	for (const char *p = c->seen; output_prof_known_next(&p, name, sizeof(name));) {
		const char *q = c->t->prof_seen;
		char have[NAME_MAX + 1];
		bool known = false;

		while (!known && output_prof_known_next(&q, have, sizeof(have)))
			known = !strcmp(have, name);
		if (!known && output_prof_known_add(&c->t->prof_seen, name))
			report_target_error(c->t->pid, "dynprof: out of memory noting %s", name);
	}
}

static int start(struct offloop *q, struct collect *c)
{
	free(c->seen);
	c->seen = c->t->prof_seen ? strdup(c->t->prof_seen) : NULL;
	if (c->t->prof_seen && !c->seen)
		return -ENOMEM;
	return offloop_start(q, &c->job);
}

static void collect_free(struct collect *c)
{
	free(c->seen);
	free(c->res);
	free(c);
}

/* On the loop's thread: the window's end finished, then t's next collection begun. */
static void job_done(struct offloop_job *j)
{
	struct collect *c = (struct collect *)((char *)j - offsetof(struct collect, job));
	struct target *t = c->t;
	struct collect *next = c->next;

	merge_seen(c);
	t->collect_head = next;
	c->done(c);
	collect_free(c);
	while (next && start(next->q, next)) { /* cannot run: that window ends with what it has */
		t->collect_head = next->next;
		next->list_rc = -ENOMEM;
		next->done(next);
		collect_free(next);
		next = t->collect_head;
	}
}

struct collect *collect_new(struct target *t, const char *output, const char *sub,
			    const struct fshelper_limits *lim, int deadline_ms)
{
	struct collect *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->t = t;
	snprintf(c->output, sizeof(c->output), "%s", output);
	snprintf(c->sub, sizeof(c->sub), "%s", sub);
	c->deadline_ms = clock_ms() + deadline_ms;
	c->in = (struct results_collect){ .h = t->fsh,
					  .inside = t->result_inside,
					  .names = target_prof_names(t),
					  .output = c->output,
					  .sub = c->sub,
					  .lim = *lim,
					  .moved = moved,
					  .ctx = c };
	atomic_init(&c->next_started, false);
	c->in.next_started = &c->next_started;
	c->job.work = work;
	c->job.done = job_done;
	return c;
}

void collect_next_started(struct target *t)
{
	for (struct collect *c = t->collect_head; c; c = c->next)
		atomic_store(&c->next_started, true);
}

int collect_queue(struct offloop *q, struct collect *c)
{
	struct collect **end = &c->t->collect_head;
	int rc;

	c->q = q;
	if (*end) { /* after the ones before it: they share the helper */
		while (*end)
			end = &(*end)->next;
		*end = c;
		return 0;
	}
	rc = start(q, c);
	if (rc == 0)
		c->t->collect_head = c;
	return rc;
}
