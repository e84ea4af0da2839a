// SPDX-License-Identifier: MIT
/*
 * The loop's registry (common/evloop.c) over real pipes: sources run in
 * the order they were added, each its round then its ready fds; an event
 * that ends the round keeps later sources from running; the timeout is
 * the soonest asked; a source that gives more fds each round is polled
 * whole.
 */
#include <string.h>
#include <unistd.h>

#include "common/evloop.h"
#include "unit.h"

struct probe {
	char log[256];
	int nfds; /* how many fds its room and fds give */
	int fd;
	bool end;
	int64_t timeout;
	const char *tag;
};

static struct probe *log_to;

static int room(void *ctx)
{
	return ((struct probe *)ctx)->nfds;
}

static int fds(void *ctx, struct pollfd *pfds, int max)
{
	struct probe *p = ctx;
	int n = p->nfds < max ? p->nfds : max;

	for (int i = 0; i < n; i++)
		pfds[i] = (struct pollfd){ .fd = p->fd, .events = POLLIN };
	return n;
}

static bool event(void *ctx, const struct pollfd *pfd)
{
	struct probe *p = ctx;

	(void)pfd;
	strcat(log_to->log, p->tag);
	strcat(log_to->log, "e");
	return p->end;
}

static void round_fn(void *ctx)
{
	strcat(log_to->log, ((struct probe *)ctx)->tag);
	strcat(log_to->log, "r");
}

static int64_t timeout(void *ctx)
{
	return ((struct probe *)ctx)->timeout;
}

static void add(struct evloop *l, struct probe *p)
{
	struct evloop_source s = { .name = p->tag,
				   .ctx = p,
				   .room = room,
				   .fds = fds,
				   .event = event,
				   .round = round_fn,
				   .timeout_ms = timeout };

	CHECK(evloop_add(l, &s) == 0);
}

TEST(sources_run_in_order_round_then_ready_fds)
{
	struct evloop l = { 0 };
	struct probe log = { 0 }, a = { .nfds = 1, .tag = "a", .timeout = -1 },
		     b = { .nfds = 2, .tag = "b", .timeout = -1 };
	int ready[2], quiet[2];

	REQUIRE(pipe(ready) == 0 && pipe(quiet) == 0);
	REQUIRE(write(ready[1], "x", 1) == 1);
	log_to = &log;
	a.fd = quiet[0];
	b.fd = ready[0];
	add(&l, &a);
	add(&l, &b);
	CHECK(evloop_round(&l) == 0);
	CHECK(strcmp(log.log, "arbrbebe") == 0);
	evloop_free(&l);
	close(ready[0]), close(ready[1]), close(quiet[0]), close(quiet[1]);
}

TEST(an_event_that_ends_the_round_stops_the_later_sources)
{
	struct evloop l = { 0 };
	struct probe log = { 0 }, a = { .nfds = 1, .tag = "a", .end = true, .timeout = -1 },
		     b = { .nfds = 1, .tag = "b", .timeout = -1 };
	int ready[2];

	REQUIRE(pipe(ready) == 0);
	REQUIRE(write(ready[1], "x", 1) == 1);
	log_to = &log;
	a.fd = b.fd = ready[0];
	add(&l, &a);
	add(&l, &b);
	CHECK(evloop_round(&l) == 0);
	CHECK(strcmp(log.log, "arae") == 0);
	evloop_free(&l);
	close(ready[0]), close(ready[1]);
}

TEST(the_timeout_is_the_soonest_asked)
{
	struct evloop l = { 0 };
	struct probe a = { .tag = "a", .timeout = -1 }, b = { .tag = "b", .timeout = 70 },
		     c = { .tag = "c", .timeout = 30 };

	add(&l, &a);
	CHECK(evloop_timeout_ms(&l) == -1);
	add(&l, &b);
	add(&l, &c);
	CHECK(evloop_timeout_ms(&l) == 30);
	c.timeout = 0;
	CHECK(evloop_timeout_ms(&l) == 0);
	evloop_free(&l);
}

TEST(a_source_that_grows_is_polled_whole)
{
	struct evloop l = { 0 };
	struct probe log = { 0 }, a = { .nfds = 1, .tag = "a", .timeout = -1 };
	int ready[2];

	REQUIRE(pipe(ready) == 0);
	REQUIRE(write(ready[1], "x", 1) == 1);
	log_to = &log;
	a.fd = ready[0];
	add(&l, &a);
	CHECK(evloop_round(&l) == 0);
	a.nfds = 40;
	log.log[0] = '\0';
	CHECK(evloop_round(&l) == 0);
	/* 40 ready fds, each its event: the round, then 40 events. */
	CHECK(l.first[1] == 40);
	CHECK_INT((int)strlen(log.log), 2 + 40 * 2);
	evloop_free(&l);
	close(ready[0]), close(ready[1]);
}

TEST(past_the_registry_a_source_is_refused)
{
	struct evloop l = { 0 };
	struct evloop_source s = { .name = "x" };

	for (int i = 0; i < EVLOOP_MAX_SOURCES; i++)
		CHECK(evloop_add(&l, &s) == 0);
	CHECK(evloop_add(&l, &s) == -ENOSPC);
	evloop_free(&l);
}

UNIT_MAIN()
