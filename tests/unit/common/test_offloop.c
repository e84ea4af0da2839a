// SPDX-License-Identifier: MIT
/*
 * Jobs beside the loop (common/offloop.c), on real threads: a job's done
 * runs on the caller's thread after its work, each exactly once; the fd
 * turns readable when one finished; a slow job holds back none finished
 * after it; drain waits for all; an idle worker takes the next job (no
 * thread made per job), and a job started while the idle one is taken
 * by a stuck job gets a worker of its own.
 */
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "common/offloop.h"
#include "unit.h"

struct job {
	struct offloop_job j;
	int gate[2]; /* work waits for a byte here (-1: does not wait) */
	pthread_t worked_on, done_on;
	int done;
	char *order; /* done appends its tag */
	char tag;
};

static void work(struct offloop_job *oj)
{
	struct job *j = (struct job *)oj;
	char c;

	j->worked_on = pthread_self();
	if (j->gate[0] >= 0 && read(j->gate[0], &c, 1) != 1)
		return;
}

static void done(struct offloop_job *oj)
{
	struct job *j = (struct job *)oj;
	size_t n = strlen(j->order);

	j->done_on = pthread_self();
	j->done++;
	j->order[n] = j->tag;
	j->order[n + 1] = '\0';
}

static void make(struct job *j, char *order, char tag, bool gated)
{
	memset(j, 0, sizeof(*j));
	j->j.work = work;
	j->j.done = done;
	j->order = order;
	j->tag = tag;
	j->gate[0] = j->gate[1] = -1;
	if (gated)
		REQUIRE(pipe(j->gate) == 0);
}

static bool readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) == 1;
}

TEST(done_runs_on_the_callers_thread_once_after_work)
{
	struct offloop q;
	struct job a;
	char order[8] = "";

	offloop_init(&q);
	CHECK_INT(offloop_fd(&q), -1);
	make(&a, order, 'a', false);
	CHECK_INT(offloop_start(&q, &a.j), 0);
	CHECK(readable(offloop_fd(&q), 5000));
	CHECK_INT(offloop_reap(&q), 1);
	CHECK_INT(a.done, 1);
	CHECK(pthread_equal(a.done_on, pthread_self()));
	CHECK(!pthread_equal(a.worked_on, pthread_self()));
	CHECK_INT(offloop_pending(&q), 0);
	CHECK_INT(offloop_reap(&q), 0);
	offloop_close(&q);
}

TEST(a_stuck_job_holds_back_none_that_finished_after_it)
{
	struct offloop q;
	struct job slow, fast;
	char order[8] = "";

	offloop_init(&q);
	make(&slow, order, 's', true);
	make(&fast, order, 'f', false);
	CHECK_INT(offloop_start(&q, &slow.j), 0);
	CHECK_INT(offloop_start(&q, &fast.j), 0);
	CHECK(readable(offloop_fd(&q), 5000));
	CHECK_INT(offloop_reap(&q), 1);
	CHECK(strcmp(order, "f") == 0);
	CHECK_INT(offloop_pending(&q), 1);
	REQUIRE(write(slow.gate[1], "x", 1) == 1);
	offloop_drain(&q);
	CHECK(strcmp(order, "fs") == 0);
	CHECK_INT(slow.done, 1);
	CHECK_INT(offloop_pending(&q), 0);
	offloop_close(&q);
	close(slow.gate[0]), close(slow.gate[1]);
}

TEST(close_waits_for_running_jobs_and_reaps_them)
{
	struct offloop q;
	struct job a[4];
	char order[8] = "";

	offloop_init(&q);
	for (int i = 0; i < 4; i++) {
		make(&a[i], order, (char)('0' + i), false);
		CHECK_INT(offloop_start(&q, &a[i].j), 0);
	}
	offloop_close(&q);
	CHECK_INT((int)strlen(order), 4);
	for (int i = 0; i < 4; i++)
		CHECK_INT(a[i].done, 1);
}

TEST(an_idle_worker_takes_the_next_job)
{
	struct offloop q;
	struct job a, b;
	char order[8] = "";

	offloop_init(&q);
	make(&a, order, 'a', false);
	make(&b, order, 'b', false);
	CHECK_INT(offloop_start(&q, &a.j), 0);
	offloop_drain(&q);
	CHECK_INT(offloop_start(&q, &b.j), 0);
	offloop_drain(&q);
	CHECK(strcmp(order, "ab") == 0);
	CHECK(pthread_equal(a.worked_on, b.worked_on));
	offloop_close(&q);
}

TEST(a_job_behind_a_stuck_one_on_the_idle_worker_gets_its_own)
{
	struct offloop q;
	struct job first, stuck, next;
	char order[8] = "";

	offloop_init(&q);
	make(&first, order, '1', false);
	make(&stuck, order, 's', true);
	make(&next, order, 'n', false);
	CHECK_INT(offloop_start(&q, &first.j), 0);
	offloop_drain(&q); /* one worker, idle */
	CHECK_INT(offloop_start(&q, &stuck.j), 0);
	CHECK_INT(offloop_start(&q, &next.j), 0);
	CHECK(readable(offloop_fd(&q), 5000));
	CHECK_INT(offloop_reap(&q), 1);
	CHECK(strcmp(order, "1n") == 0);
	REQUIRE(write(stuck.gate[1], "x", 1) == 1);
	offloop_drain(&q);
	CHECK(strcmp(order, "1ns") == 0);
	offloop_close(&q);
	close(stuck.gate[0]), close(stuck.gate[1]);
}

UNIT_MAIN()
