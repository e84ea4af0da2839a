/* SPDX-License-Identifier: MIT */
/*
 * Answers about a live process, kept until it is gone, and read beside the
 * loop when reading them may wait on the process (its helper, its files).
 *
 * An answer is an error code and a small value (a home, a verdict), keyed
 * by (pid, start time, tag): a reused pid, or another question about the
 * same process (another uid, another filter), is another key. Entries of
 * processes that are gone go when the memo is full (PIDMEMO_MAX).
 *
 * pidmemo_beside starts a detached thread for one key (at most
 * PIDMEMO_THREADS at a time) that puts the answer when it has one; the key
 * is marked -EINPROGRESS meanwhile, so a caller that may not wait asks
 * again later and one that may wait reads it itself. Safe from any thread.
 */
#ifndef DYNPROF_PIDMEMO_H
#define DYNPROF_PIDMEMO_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/pidtab.h"

#define PIDMEMO_MAX 4096
#define PIDMEMO_THREADS 64

struct pidmemo_key {
	int pid;
	unsigned long long start; /* /proc/<pid>/stat's start time */
	unsigned tag;             /* which question about the process */
};

struct pidmemo {
	pthread_mutex_t lock;
	struct pidtab tab; /* pid -> its entries */
	int threads;       /* pidmemo_beside's, running */
};

#define PIDMEMO_INIT                              \
	{                                         \
		.lock = PTHREAD_MUTEX_INITIALIZER \
	}

/*
 * The answer kept for k: true, with *err and (up to len bytes) the value.
 * A key being read (-EINPROGRESS) is a hit only when pending_ok.
 */
bool pidmemo_get(struct pidmemo *m, const struct pidmemo_key *k, bool pending_ok, int *err,
		 void *val, size_t len);

/* Keep err and len bytes of val for k (nothing kept out of memory: asked again). */
void pidmemo_put(struct pidmemo *m, const struct pidmemo_key *k, int err, const void *val, size_t len);

/*
 * Run read(arg) on a thread of its own, k marked -EINPROGRESS meanwhile;
 * read puts its answer for k, or none (the mark goes: the next ask starts
 * another). arg is freed after. Always -EINPROGRESS, also when no thread
 * could be started (nothing marked: asked again).
 */
int pidmemo_beside(struct pidmemo *m, const struct pidmemo_key *k, void (*read)(void *arg), void *arg);

#endif /* DYNPROF_PIDMEMO_H */
