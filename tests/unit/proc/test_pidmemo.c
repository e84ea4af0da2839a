// SPDX-License-Identifier: MIT
/*
 * Answers kept per (pid, start, tag) and read beside the caller
 * (proc/pidmemo.c): each key its own, a new start drops the old ones, a
 * mark reads as a hit only to a caller that may not wait, and a read
 * beside either puts its answer or leaves nothing marked.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "proc/pidmemo.h"
#include "unit.h"

static struct pidmemo memo = PIDMEMO_INIT;

TEST(each_key_keeps_its_own_answer)
{
	struct pidmemo_key a = { .pid = 42, .start = 7, .tag = 1 }, b = a, c = a;
	int err = 1, v = 0;

	b.tag = 2;
	c.start = 8;
	CHECK(!pidmemo_get(&memo, &a, true, &err, &v, sizeof(v)));
	pidmemo_put(&memo, &a, 0, &(int){ 10 }, sizeof(int));
	pidmemo_put(&memo, &b, -ENOENT, &(int){ 20 }, sizeof(int));
	CHECK(pidmemo_get(&memo, &a, false, &err, &v, sizeof(v)));
	CHECK_INT(err, 0);
	CHECK_INT(v, 10);
	CHECK(pidmemo_get(&memo, &b, false, &err, &v, sizeof(v)));
	CHECK_INT(err, -ENOENT);
	CHECK_INT(v, 20);
	/* A reused pid: its answers are another process's, and the old ones go. */
	CHECK(!pidmemo_get(&memo, &c, true, &err, &v, sizeof(v)));
	pidmemo_put(&memo, &c, 0, &(int){ 30 }, sizeof(int));
	CHECK(!pidmemo_get(&memo, &a, true, &err, &v, sizeof(v)));
	CHECK(!pidmemo_get(&memo, &b, true, &err, &v, sizeof(v)));
	CHECK(pidmemo_get(&memo, &c, false, &err, &v, sizeof(v)));
	CHECK_INT(v, 30);
}

static int gate[2];

/* A read that waits for the test's word, then answers 5 (or, told 'n', nothing). */
static void slow_read(void *arg)
{
	struct pidmemo_key *k = arg;
	char c = 0;

	if (read(gate[0], &c, 1) == 1 && c == 'y')
		pidmemo_put(&memo, k, 0, &(int){ 5 }, sizeof(int));
}

static bool answered(const struct pidmemo_key *k, bool pending_ok, int *err, int *v)
{
	for (int i = 0; i < 500; i++) {
		if (pidmemo_get(&memo, k, pending_ok, err, v, sizeof(*v)) && *err != -EINPROGRESS)
			return true;
		nanosleep(&(struct timespec){ .tv_nsec = 2000000 }, NULL);
	}
	return false;
}

static void beside(const struct pidmemo_key *k)
{
	struct pidmemo_key *arg = malloc(sizeof(*arg));

	*arg = *k;
	CHECK_INT(pidmemo_beside(&memo, k, slow_read, arg), -EINPROGRESS);
}

TEST(a_read_beside_is_marked_until_it_answers)
{
	struct pidmemo_key k = { .pid = 43, .start = 1, .tag = 0 };
	int err = 0, v = 0;

	CHECK(pipe(gate) == 0);
	beside(&k);
	/* Marked: a hit for a caller that may not wait, none for one that reads itself. */
	CHECK(pidmemo_get(&memo, &k, true, &err, &v, sizeof(v)));
	CHECK_INT(err, -EINPROGRESS);
	CHECK(!pidmemo_get(&memo, &k, false, &err, &v, sizeof(v)));
	CHECK(write(gate[1], "y", 1) == 1);
	CHECK(answered(&k, false, &err, &v));
	CHECK_INT(v, 5);
}

TEST(a_read_beside_without_an_answer_leaves_no_mark)
{
	struct pidmemo_key k = { .pid = 44, .start = 1, .tag = 0 };
	int err = 0, v = 0, i;

	beside(&k);
	CHECK(write(gate[1], "n", 1) == 1);
	for (i = 0; i < 500 && pidmemo_get(&memo, &k, true, &err, &v, sizeof(v)); i++)
		nanosleep(&(struct timespec){ .tv_nsec = 2000000 }, NULL);
	CHECK(i < 500);
}

UNIT_MAIN()
