// SPDX-License-Identifier: MIT
/* linkreaper.h: one background thread destroying queued BPF links in order. */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "common/grow.h"
#include "common/thread.h"
#include "kernel/linkreaper.h"

struct reap_item {
	struct bpf_link *link;
	uint64_t tag;
};

struct linkreaper {
	pthread_mutex_t mu;
	pthread_cond_t cv;   /* a link queued, a link destroyed, or stop */
	struct reap_item *q; /* FIFO, q[0] next */
	size_t n, cap;
	uint64_t busy_tag; /* the link being destroyed now, when busy */
	bool busy, started, stop;
	pthread_t thread;
};

struct linkreaper *linkreaper_new(void)
{
	struct linkreaper *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	return r;
}

/* The thread: take the next link, destroy it without the lock, tell waiters. */
static void *reap(void *arg)
{
	struct linkreaper *r = arg;

	pthread_mutex_lock(&r->mu);
	while (r->n || !r->stop) {
		struct reap_item it;

		if (!r->n) {
			pthread_cond_wait(&r->cv, &r->mu);
			continue;
		}
		it = r->q[0];
		memmove(r->q, r->q + 1, --r->n * sizeof(*r->q));
		r->busy = true;
		r->busy_tag = it.tag;
		pthread_mutex_unlock(&r->mu);
		bpf_link__destroy(it.link);
		pthread_mutex_lock(&r->mu);
		r->busy = false;
		pthread_cond_broadcast(&r->cv);
	}
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

/* Queue a link (lock held); false when it cannot be queued. */
static bool enqueue(struct linkreaper *r, struct bpf_link *link, uint64_t tag)
{
	if (!r->started) {
		if (thread_start(&r->thread, NULL, reap, r) != 0)
			return false;
		r->started = true;
	}
	if (grow_for_one((void **)&r->q, &r->cap, r->n, sizeof(*r->q), 16))
		return false;
	r->q[r->n++] = (struct reap_item){ link, tag };
	pthread_cond_broadcast(&r->cv);
	return true;
}

void linkreaper_add(struct linkreaper *r, struct bpf_link *link, uint64_t tag)
{
	bool queued = false;

	if (!link)
		return;
	if (r) {
		pthread_mutex_lock(&r->mu);
		queued = !r->stop && enqueue(r, link, tag);
		pthread_mutex_unlock(&r->mu);
	}
	if (!queued)
		bpf_link__destroy(link);
}

static bool pending(const struct linkreaper *r, uint64_t tag)
{
	if (r->busy && r->busy_tag == tag)
		return true;
	for (size_t i = 0; i < r->n; i++)
		if (r->q[i].tag == tag)
			return true;
	return false;
}

void linkreaper_wait(struct linkreaper *r, uint64_t tag)
{
	if (!r)
		return;
	pthread_mutex_lock(&r->mu);
	while (pending(r, tag))
		pthread_cond_wait(&r->cv, &r->mu);
	pthread_mutex_unlock(&r->mu);
}

void linkreaper_free(struct linkreaper *r)
{
	if (!r)
		return;
	pthread_mutex_lock(&r->mu);
	r->stop = true;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
	if (r->started)
		pthread_join(r->thread, NULL); /* it empties the queue before it stops */
	free(r->q);
	pthread_cond_destroy(&r->cv);
	pthread_mutex_destroy(&r->mu);
	free(r);
}
