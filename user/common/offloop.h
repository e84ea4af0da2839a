/* SPDX-License-Identifier: MIT */
/*
 * Work done beside the poll loop: what may wait on one target (its
 * helper's answers, a copy out of its filesystem) runs on a thread of its
 * own (a worker: one idle for OFFLOOP_IDLE_MS ends, a job with no idle
 * worker gets a new one, so no job waits for another), and its end is an
 * event of the loop (evloop.h): the loop polls
 * offloop_fd and, when it is readable, offloop_reap runs each finished
 * job's `done` on the loop's thread, in the order they finished.
 *
 * A job's `work` runs on its thread and touches only what the job owns;
 * `done` is where the results meet the loop's state. Signals stay blocked
 * on the threads (common/thread.h: the loop's signalfd reads them). Every
 * job started is done exactly once: offloop_drain waits for
 * those still running (each bounded by its own deadline).
 */
#ifndef DYNPROF_OFFLOOP_H
#define DYNPROF_OFFLOOP_H

#include <pthread.h>
#include <stdbool.h>

#include "shared/compiler.h"

struct offloop_job {
	void (*work)(struct offloop_job *j); /* on its thread */
	void (*done)(struct offloop_job *j); /* on the loop's thread, after work; may free j */
	/* the queue's */
	struct offloop_job *next;
};

/* Jobs oldest first: in at the tail, out at the head. */
struct offloop_list {
	struct offloop_job *head;
	struct offloop_job **tail;
	int n;
};

struct offloop {
	pthread_mutex_t lock;
	pthread_cond_t wake;          /* a job waits, or the workers are to end */
	pthread_cond_t ended;         /* the last worker ended */
	int efd;                      /* -1 until the first job */
	struct offloop_list waiting;  /* started, no worker has it yet */
	struct offloop_list finished; /* finished, not yet reaped */
	int running;                  /* started, not yet reaped */
	int workers;                  /* threads alive ... */
	int idle;                     /* ... of them waiting for a job */
	bool stopping;
	bool ready;
};

void offloop_init(struct offloop *q);

/* Start j on a worker of its own: 0, or a negative errno (then nothing runs). */
int offloop_start(struct offloop *q, struct offloop_job *j) DP_MUST_CHECK;

/* The fd the loop polls (readable: a job finished), -1 before any job. */
int offloop_fd(const struct offloop *q);

/* Run `done` of every job finished so far; how many. */
int offloop_reap(struct offloop *q);

/* Jobs started and not yet reaped. */
int offloop_pending(struct offloop *q);

/* Wait for every job, reaping each (the run's end). */
void offloop_drain(struct offloop *q);

void offloop_close(struct offloop *q);

#endif /* DYNPROF_OFFLOOP_H */
