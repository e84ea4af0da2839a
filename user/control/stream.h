/* SPDX-License-Identifier: MIT */
/*
 * The bounded queue of one --control client that streams events (the
 * `events` command): lines wait here until its socket takes them, so a
 * slow reader never blocks dynprof. When a line does not fit, it and every
 * line after it are dropped and counted until the queue has drained
 * completely; then one line {"event":"dropped","time_us":T,"count":N}
 * marks the gap (docs/EVENTS-JSON.md) and lines are queued again.
 * Pure: no I/O; the caller writes what stream_queue_peek shows.
 */
#ifndef DYNPROF_STREAM_H
#define DYNPROF_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/compiler.h"

#define STREAM_QUEUE_BYTES (256 * 1024) /* per streaming client */

struct stream_queue {
	char *data; /* cap bytes */
	size_t cap;
	size_t head, len; /* the bytes waiting: data[head, head + len) */
	bool dropping;    /* a line did not fit: drop until drained */
	uint64_t dropped; /* lines dropped since */
};

/* 0, or -ENOMEM. */
int stream_queue_init(struct stream_queue *q, size_t cap) DP_MUST_CHECK;
void stream_queue_free(struct stream_queue *q);

/* Queue `line` (len bytes, no newline) and a newline; false: dropped and counted. */
bool stream_queue_push(struct stream_queue *q, const char *line, size_t len);
/* The bytes waiting, in order: *p and how many (0: none). */
size_t stream_queue_peek(const struct stream_queue *q, const char **p);
/*
 * n bytes of those were written. When that drains a queue that dropped
 * lines, the "dropped" line (time now_us) is queued.
 */
void stream_queue_consumed(struct stream_queue *q, size_t n, int64_t now_us);

#endif /* DYNPROF_STREAM_H */
