// SPDX-License-Identifier: MIT
/* Jobs beside the poll loop (see offloop.h). */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "common/offloop.h"
#include "common/thread.h"

/* A job's stack: it copies through its helper's buffers, never on the stack. */
#define OFFLOOP_STACK (256 * 1024)

void offloop_init(struct offloop *q)
{
	pthread_mutex_init(&q->lock, NULL);
	q->efd = -1;
	q->finished = NULL;
	q->tail = &q->finished;
	q->running = 0;
	q->ready = true;
}

static void *run(void *arg)
{
	struct offloop_job *j = arg;
	struct offloop *q = j->q;
	uint64_t one = 1;

	pthread_setname_np(pthread_self(), "dynprof-job"); /* ps -L, gdb: beside the loop */
	j->work(j);
	pthread_mutex_lock(&q->lock);
	j->next = NULL;
	*q->tail = j;
	q->tail = &j->next;
	pthread_mutex_unlock(&q->lock);
	/* The loop wakes; a full counter (never reached) still reads as readable. */
	if (write(q->efd, &one, sizeof(one)) < 0) {
		/* EAGAIN only: the count is already past zero */
	}
	return NULL;
}

int offloop_start(struct offloop *q, struct offloop_job *j)
{
	pthread_attr_t attr;
	int rc;

	if (q->efd < 0) {
		q->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (q->efd < 0)
			return -errno;
	}
	j->q = q;
	j->next = NULL;
	if (pthread_attr_init(&attr))
		return -ENOMEM;
	pthread_attr_setstacksize(&attr, OFFLOOP_STACK);
	pthread_mutex_lock(&q->lock);
	q->running++;
	pthread_mutex_unlock(&q->lock);
	rc = thread_start(&j->thread, &attr, run, j);
	pthread_attr_destroy(&attr);
	if (rc) {
		pthread_mutex_lock(&q->lock);
		q->running--;
		pthread_mutex_unlock(&q->lock);
		return -rc;
	}
	return 0;
}

int offloop_fd(const struct offloop *q)
{
	return q->efd;
}

static struct offloop_job *take_finished(struct offloop *q)
{
	struct offloop_job *j;

	pthread_mutex_lock(&q->lock);
	j = q->finished;
	if (j) {
		q->finished = j->next;
		if (!q->finished)
			q->tail = &q->finished;
		q->running--;
	}
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
		pthread_join(j->thread, NULL);
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
	if (q->efd >= 0)
		close(q->efd);
	q->efd = -1;
	pthread_mutex_destroy(&q->lock);
	q->ready = false;
}
