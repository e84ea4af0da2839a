// SPDX-License-Identifier: MIT
/* A streaming control client's bounded queue (see stream.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/stream.h"

int stream_queue_init(struct stream_queue *q, size_t cap)
{
	memset(q, 0, sizeof(*q));
	q->data = malloc(cap);
	if (!q->data)
		return -ENOMEM;
	q->cap = cap;
	return 0;
}

void stream_queue_free(struct stream_queue *q)
{
	free(q->data);
	memset(q, 0, sizeof(*q));
}

/* Room for `need` more bytes after the waiting ones, moving them to the front if that makes it. */
static bool make_room(struct stream_queue *q, size_t need)
{
	if (need > q->cap - q->len)
		return false;
	if (q->head + q->len + need > q->cap) {
		memmove(q->data, q->data + q->head, q->len);
		q->head = 0;
	}
	return true;
}

static void put(struct stream_queue *q, const char *line, size_t len)
{
	memcpy(q->data + q->head + q->len, line, len);
	q->data[q->head + q->len + len] = '\n';
	q->len += len + 1;
}

bool stream_queue_push(struct stream_queue *q, const char *line, size_t len)
{
	if (q->dropping || len >= q->cap || !make_room(q, len + 1)) {
		q->dropping = true;
		q->dropped++;
		return false;
	}
	put(q, line, len);
	return true;
}

size_t stream_queue_peek(const struct stream_queue *q, const char **p)
{
	*p = q->data + q->head;
	return q->len;
}

void stream_queue_consumed(struct stream_queue *q, size_t n, int64_t now_us)
{
	char note[128];
	int len;

	if (n > q->len)
		n = q->len;
	q->head += n;
	q->len -= n;
	if (q->len)
		return;
	q->head = 0;
	if (!q->dropping)
		return;
	/* Drained: the gap is marked where it was, before any later line. */
	len = snprintf(note, sizeof(note),
		       "{\"event\":\"dropped\",\"time_us\":%" PRId64 ",\"count\":%" PRIu64 "}",
		       now_us, q->dropped);
	q->dropping = false;
	q->dropped = 0;
	if (len > 0 && (size_t)len < sizeof(note) && (size_t)len < q->cap)
		put(q, note, (size_t)len);
}
