// SPDX-License-Identifier: MIT
/*
 * A streaming control client's queue (control/stream.c) and the events
 * listener it is fed by (report/events_out.c): lines kept whole and in order,
 * a full queue dropping and counting until it drained, then one "dropped"
 * line at the gap; no event built without a sink or listener.
 */
#include <inttypes.h>
#include <stdio.h>

#include "control/stream.h"
#include "report/events_out.h"
#include "unit.h"

/* Everything waiting, as a string (consumed). */
static const char *take_all(struct stream_queue *q, int64_t now_us)
{
	static char out[4096];
	const char *p;
	size_t n = stream_queue_peek(q, &p);

	snprintf(out, sizeof(out), "%.*s", (int)n, p);
	stream_queue_consumed(q, n, now_us);
	return out;
}

TEST(lines_come_out_whole_and_in_order)
{
	struct stream_queue q;
	const char *p;

	REQUIRE(!stream_queue_init(&q, 64));
	CHECK_INT(stream_queue_peek(&q, &p), 0);
	CHECK(stream_queue_push(&q, "ack events", 10));
	CHECK(stream_queue_push(&q, "{\"a\":1}", 7));
	CHECK_INT(stream_queue_peek(&q, &p), 19);
	stream_queue_consumed(&q, 4, 1); /* a partial write */
	CHECK_STR(take_all(&q, 1), "events\n{\"a\":1}\n");
	CHECK_INT(stream_queue_peek(&q, &p), 0);
	stream_queue_free(&q);
}

TEST(room_made_by_moving_the_waiting_bytes_keeps_their_order)
{
	struct stream_queue q;

	REQUIRE(!stream_queue_init(&q, 32));
	CHECK(stream_queue_push(&q, "0123456789", 10));          /* 11 bytes */
	CHECK(stream_queue_push(&q, "abcdefghij", 10));          /* 22 */
	stream_queue_consumed(&q, 11, 1);                        /* head at 11, 11 waiting */
	CHECK(stream_queue_push(&q, "ABCDEFGHIJKLMNOPQRS", 19)); /* 20 more: fits only moved */
	CHECK_STR(take_all(&q, 1), "abcdefghij\nABCDEFGHIJKLMNOPQRS\n");
	stream_queue_free(&q);
}

TEST(a_full_queue_drops_until_drained_then_says_how_many)
{
	struct stream_queue q;
	int kept = 0;
	char want[128];

	REQUIRE(!stream_queue_init(&q, 256));
	for (int i = 0; i < 40; i++)
		kept += stream_queue_push(&q, "0123456789", 10);
	CHECK_INT(kept, 23); /* 23 * 11 = 253 of 256 */
	CHECK_INT(q.dropped, 17);
	/* Room again, but not drained: still dropping, so the gap stays one gap. */
	stream_queue_consumed(&q, 110, 5);
	CHECK(!stream_queue_push(&q, "x", 1));
	CHECK_INT(q.dropped, 18);
	{
		const char *p;
		size_t n = stream_queue_peek(&q, &p);

		CHECK_INT(n, 143);
		stream_queue_consumed(&q, n, 1234567);
	}
	snprintf(want, sizeof(want), "{\"event\":\"dropped\",\"time_us\":1234567,\"count\":18}\n");
	CHECK_STR(take_all(&q, 9), want);
	CHECK(stream_queue_push(&q, "after", 5));
	CHECK_STR(take_all(&q, 9), "after\n");
	CHECK_INT(q.dropped, 0);
	stream_queue_free(&q);
}

TEST(a_line_larger_than_the_queue_is_dropped)
{
	struct stream_queue q;
	char big[100];

	REQUIRE(!stream_queue_init(&q, 100));
	memset(big, 'x', sizeof(big));
	CHECK(!stream_queue_push(&q, big, sizeof(big)));
	CHECK(!stream_queue_push(&q, big, 99)); /* its newline would not fit */
	CHECK_INT(q.dropped, 2);
	stream_queue_free(&q);
}

static char heard[512];
static int heard_n;

static void listen_fn(void *ctx, const char *line, size_t len)
{
	(void)ctx;
	snprintf(heard, sizeof(heard), "%.*s", (int)len, line);
	heard_n++;
}

TEST(events_are_built_only_for_a_sink_or_a_listener)
{
	CHECK(!events_enabled());
	events_window_open(42); /* nobody: nothing built, nothing heard */
	CHECK_INT(heard_n, 0);
	events_set_listener(listen_fn, NULL);
	CHECK(events_enabled());
	events_window_open(42);
	CHECK_INT(heard_n, 1);
	CHECK(!strncmp(heard, "{\"event\":\"window-open\",\"time_us\":", 33));
	CHECK(strstr(heard, ",\"pid\":42}") && !strchr(heard, '\n'));
	events_target_leave(42, "quit");
	CHECK(strstr(heard, "\"reason\":\"quit\"") != NULL);
	events_set_listener(NULL, NULL);
	CHECK(!events_enabled());
	events_window_open(43);
	CHECK_INT(heard_n, 2);
}

UNIT_MAIN()
