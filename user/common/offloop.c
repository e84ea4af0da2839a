// SPDX-License-Identifier: MIT
/* Jobs beside the poll loop (see offloop.h). */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "common/offloop.h"
#include "common/thread.h"

/* A job's stack: it copies through its helper's buffers, never on the stack. */
#define OFFLOOP_STACK (256 * 1024)
/*
 * A worker with nothing to do for this long ends. Kept meanwhile: a thread
 * made per job cost a join ~0.2 ms (its creation, then the loop's
 * pthread_join waiting for its stack to go).
 */
#define OFFLOOP_IDLE_MS 10000

void offloop_init(struct offloop *q)
{
	pthread_condattr_t ca;

	pthread_mutex_init(&q->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&q->wake, &ca);
	pthread_condattr_destroy(&ca);
	pthread_cond_init(&q->ended, NULL);
	q->efd = -1;
	q->waiting = (struct offloop_list){ .tail = &q->waiting.head };
	q->finished = (struct offloop_list){ .tail = &q->finished.head };
	q->running = q->workers = q->idle = 0;
	q->stopping = false;
	q->ready = true;
}

/* Lock held, both. */
static void push(struct offloop_list *l, struct offloop_job *j)
{
	j->next = NULL;
	*l->tail = j;
	l->tail = &j->next;
	l->n++;
}

static struct offloop_job *take(struct offloop_list *l)
{
	struct offloop_job *j = l->head;

	if (j) {
		l->head = j->next;
		if (!l->head)
			l->tail = &l->head;
		l->n--;
	}
	return j;
}

/* The next waiting job, or NULL after OFFLOOP_IDLE_MS without one (or when stopping). Lock held. */
static struct offloop_job *next_job(struct offloop *q)
{
	struct timespec until;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += OFFLOOP_IDLE_MS / 1000;
	while (!q->waiting.head && !q->stopping) {
		int rc;

		q->idle++;
		rc = pthread_cond_timedwait(&q->wake, &q->lock, &until);
		q->idle--;
		if (rc == ETIMEDOUT)
			break;
	}
	return take(&q->waiting);
}

/*
 * Its end on the finished list; the loop wakes (a full counter, never
 * reached, still reads as readable). Lock held, and kept by the worker
 * until it waits as idle: a job the loop starts once it has seen this one
 * end finds the worker idle, and no other is made for it.
 */
static void finished(struct offloop *q, struct offloop_job *j)
{
	uint64_t one = 1;

	push(&q->finished, j);
	if (write(q->efd, &one, sizeof(one)) < 0) {
		/* EAGAIN only: the count is already past zero */
	}
}

static void *worker(void *arg)
{
	struct offloop *q = arg;
	struct offloop_job *j;

	pthread_setname_np(pthread_self(), "dynprof-job"); /* ps -L, gdb: beside the loop */
	pthread_mutex_lock(&q->lock);
	while ((j = next_job(q))) {
		pthread_mutex_unlock(&q->lock);
		j->work(j);
		pthread_mutex_lock(&q->lock);
		finished(q, j);
	}
	if (--q->workers == 0)
		pthread_cond_broadcast(&q->ended);
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

/* One more worker, detached (nothing joins it: offloop_close waits for `ended`). Lock held. */
static int add_worker(struct offloop *q)
{
	pthread_attr_t attr;
	pthread_t th;
	int rc;

	if (pthread_attr_init(&attr))
		return ENOMEM;
	pthread_attr_setstacksize(&attr, OFFLOOP_STACK);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = thread_start(&th, &attr, worker, q);
	pthread_attr_destroy(&attr);
	if (!rc)
		q->workers++;
	return rc;
}

int offloop_start(struct offloop *q, struct offloop_job *j)
{
	int rc = 0;

	if (q->efd < 0) {
		q->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (q->efd < 0)
			return -errno;
	}
	pthread_mutex_lock(&q->lock);
	/* Every waiting job has an idle worker of its own, or a new one: none waits for another's end. */
	if (q->waiting.n + 1 > q->idle)
		rc = add_worker(q);
	if (!rc) {
		push(&q->waiting, j);
		q->running++;
		pthread_cond_signal(&q->wake);
	}
	pthread_mutex_unlock(&q->lock);
	return -rc;
}

int offloop_fd(const struct offloop *q)
{
	return q->efd;
}

static struct offloop_job *take_finished(struct offloop *q)
{
	struct offloop_job *j;

	pthread_mutex_lock(&q->lock);
	j = take(&q->finished);
	if (j)
		q->running--;
	pthread_mutex_unlock(&q->lock);
	return j;
}

int offloop_reap(struct offloop *q)
{
	uint64_t count;
	struct offloop_job *j;
	int n = 0;

	if (q->efd < 0)
		return 0;
	if (read(q->efd, &count, sizeof(count)) < 0) {
		/* EAGAIN: nothing new since the last read; the list says what finished */
	}
	while ((j = take_finished(q))) {
		j->done(j);
		n++;
	}
	return n;
}

int offloop_pending(struct offloop *q)
{
	int n;

	pthread_mutex_lock(&q->lock);
	n = q->running;
	pthread_mutex_unlock(&q->lock);
	return n;
}

void offloop_drain(struct offloop *q)
{
	struct pollfd p = { .fd = q->efd, .events = POLLIN };

	while (q->efd >= 0 && offloop_pending(q) > 0) {
		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			return;
		offloop_reap(q);
	}
}

void offloop_close(struct offloop *q)
{
	if (!q->ready)
		return;
	offloop_drain(q);
	pthread_mutex_lock(&q->lock);
	q->stopping = true;
	pthread_cond_broadcast(&q->wake);
	while (q->workers > 0)
		pthread_cond_wait(&q->ended, &q->lock);
	pthread_mutex_unlock(&q->lock);
	if (q->efd >= 0)
		close(q->efd);
	q->efd = -1;
	pthread_cond_destroy(&q->wake);
	pthread_cond_destroy(&q->ended);
	pthread_mutex_destroy(&q->lock);
	q->ready = false;
}
