// SPDX-License-Identifier: MIT
/*
 * The process model's bookkeeping (model/procmodel.c) fed with synthetic
 * kernel events for pids above pid_max (no such process exists, so nothing
 * is read from /proc for them).
 */
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "model/opencheck.h"
#include "model/procmodel.h"
#include "shared/cards.h"
#include "unit.h"

#define NOPID 5000000 /* above PID_MAX_LIMIT (2^22): never a real process */

struct recorder {
	char log[1024];
};

static void record(void *ctx, enum pm_change what, const struct pm_proc *p)
{
	static const char *const names[] = { "exec", "open", "close", "socket", "exit" };
	struct recorder *r = ctx;
	size_t n = strlen(r->log);

	snprintf(r->log + n, sizeof(r->log) - n, "%s%s:%d:%llx", n ? " " : "", names[what], p->pid,
		 (unsigned long long)p->cards);
}

static struct dp_event ev(enum dp_event_type type, int pid, int ppid, unsigned long long start_s)
{
	struct dp_event e;

	memset(&e, 0, sizeof(e));
	e.type = type;
	e.pid = (uint32_t)pid;
	e.ppid = (uint32_t)ppid;
	e.uid = 1000;
	e.card = -1;
	e.fd = -1;
	e.start_ns = start_s * 1000000000ULL;
	snprintf(e.comm, sizeof(e.comm), "task%d", pid);
	return e;
}

static struct procmodel *test_model(struct recorder *r)
{
	struct card_patterns p;
	struct procmodel *m;

	memset(r, 0, sizeof(*r));
	CHECK_INT(cards_parse_patterns(&p, "/nonexistent-dynprof/davinci*"), 0);
	m = procmodel_new(&p);
	cards_free_patterns(&p);
	if (m)
		procmodel_set_listener(m, record, r);
	return m;
}

TEST(model_fork_chain_gives_ancestry)
{
	struct recorder r;
	struct procmodel *m = test_model(&r);
	struct dp_event e;

	REQUIRE(m != NULL);
	e = ev(DP_EVENT_FORK, NOPID + 1, 1, 100);
	procmodel_apply(m, &e);
	e = ev(DP_EVENT_FORK, NOPID + 2, NOPID + 1, 101);
	procmodel_apply(m, &e);
	e = ev(DP_EVENT_FORK, NOPID + 3, NOPID + 2, 102);
	procmodel_apply(m, &e);
	CHECK(procmodel_descends_from(m, NOPID + 3, NOPID + 1));
	CHECK(procmodel_descends_from(m, NOPID + 3, NOPID + 3));
	CHECK(!procmodel_descends_from(m, NOPID + 1, NOPID + 3));
	CHECK_INT(procmodel_get(m, NOPID + 3)->start_time, 10200);
	CHECK_INT(procmodel_get(m, NOPID + 3)->ppid, NOPID + 2);
	CHECK(!procmodel_get(m, NOPID + 3)->complete);
	/* The middle one exits: the chain stops there. */
	e = ev(DP_EVENT_EXIT, NOPID + 2, NOPID + 1, 101);
	procmodel_apply(m, &e);
	CHECK(procmodel_get(m, NOPID + 2) == NULL);
	CHECK(!procmodel_descends_from(m, NOPID + 3, NOPID + 1));
	CHECK_STR(r.log, "exec:5000001:0 exec:5000002:0 exec:5000003:0 exit:5000002:0");
	procmodel_free(m);
}

TEST(model_reused_pid_is_a_new_process)
{
	struct recorder r;
	struct procmodel *m = test_model(&r);
	struct dp_event e;

	REQUIRE(m != NULL);
	e = ev(DP_EVENT_FORK, NOPID + 1, 1, 100);
	procmodel_apply(m, &e);
	e = ev(DP_EVENT_FORK, NOPID + 2, NOPID + 1, 200);
	procmodel_apply(m, &e);
	/* An EXIT for another process on that pid changes nothing. */
	e = ev(DP_EVENT_EXIT, NOPID + 2, 1, 150);
	procmodel_apply(m, &e);
	CHECK(procmodel_get(m, NOPID + 2) != NULL);
	/* A FORK on the pid with another start: the old one is gone (its EXIT was lost). */
	e = ev(DP_EVENT_FORK, NOPID + 2, 1, 300);
	procmodel_apply(m, &e);
	CHECK_INT(procmodel_get(m, NOPID + 2)->start_time, 30000);
	CHECK_STR(r.log, "exec:5000001:0 exec:5000002:0 exit:5000002:0 exec:5000002:0");
	/* A "parent" younger than its child is a reused pid, not an ancestor. */
	e = ev(DP_EVENT_FORK, NOPID + 3, NOPID + 1, 400);
	procmodel_apply(m, &e);
	e = ev(DP_EVENT_EXIT, NOPID + 1, 1, 100);
	procmodel_apply(m, &e);
	e = ev(DP_EVENT_FORK, NOPID + 1, 1, 500);
	procmodel_apply(m, &e);
	CHECK(!procmodel_descends_from(m, NOPID + 3, NOPID + 1));
	CHECK_INT(procmodel_count(m), 3);
	procmodel_free(m);
}

TEST(model_exec_takes_argv_from_the_event)
{
	static const char args[] = "python3\0train.py\0--npu\0";
	struct recorder r;
	struct procmodel *m = test_model(&r);
	struct dp_event e;

	REQUIRE(m != NULL);
	e = ev(DP_EVENT_EXEC, NOPID + 5, 1, 100);
	snprintf(e.path, sizeof(e.path), "/usr/bin/python3");
	memcpy(e.args, args, sizeof(args));
	e.args_len = sizeof(args) - 1;
	procmodel_apply(m, &e);
	CHECK_STR(procmodel_get(m, NOPID + 5)->cmdline, "python3 train.py --npu");
	CHECK_STR(procmodel_get(m, NOPID + 5)->exe, "/usr/bin/python3");
	CHECK_STR(procmodel_get(m, NOPID + 5)->comm, "task5000005");
	CHECK_INT(procmodel_get(m, NOPID + 5)->uid, 1000);
	CHECK_STR(procmodel_get(m, NOPID + 5)->socket, "");
	procmodel_free(m);
}

TEST(model_card_open_sets_the_card_and_forks_inherit_it)
{
	struct recorder r;
	struct procmodel *m = test_model(&r);
	struct dp_event e;

	REQUIRE(m != NULL);
	e = ev(DP_EVENT_FORK, NOPID + 1, 1, 100);
	procmodel_apply(m, &e);
	e = ev(DP_EVENT_CARD_OPEN, NOPID + 1, 1, 100);
	e.card = 3;
	procmodel_apply(m, &e);
	/* No index from the kernel: the path's number. */
	e = ev(DP_EVENT_CARD_OPEN, NOPID + 1, 1, 100);
	snprintf(e.path, sizeof(e.path), "/nonexistent-dynprof/davinci5");
	procmodel_apply(m, &e);
	CHECK_INT(procmodel_get(m, NOPID + 1)->cards, (1 << 3) | (1 << 5));
	/* A child inherits every fd, cards included. */
	e = ev(DP_EVENT_FORK, NOPID + 2, NOPID + 1, 101);
	procmodel_apply(m, &e);
	CHECK_INT(procmodel_get(m, NOPID + 2)->cards, (1 << 3) | (1 << 5));
	/* A card open by a process never seen: it appears holding it. */
	e = ev(DP_EVENT_CARD_OPEN, NOPID + 9, 1, 100);
	e.card = 0;
	procmodel_apply(m, &e);
	CHECK_INT(procmodel_get(m, NOPID + 9)->cards, 1);
	CHECK_STR(r.log, "exec:5000001:0 open:5000001:8 open:5000001:28 exec:5000002:28 open:5000002:28 "
			 "exec:5000009:1 open:5000009:1");
	procmodel_free(m);
}

/*
 * The card users' socket re-check in slices (the tracker's, so that 1000
 * of them never hold up the loop): a slice past its time re-checks one
 * holder and stops; the pass ends back at slot 0; with time left, a call
 * still looks at no more than PROCMODEL_PASS_SLOTS slots of the table.
 */
TEST(model_socket_recheck_goes_in_slices)
{
	struct recorder r;
	struct procmodel *m = test_model(&r);
	struct dp_event e;
	size_t cursor = 0;
	int calls = 0;
	bool done = false;

	REQUIRE(m != NULL);
	for (int i = 1; i <= 5; i++) {
		e = ev(DP_EVENT_CARD_OPEN, NOPID + i, 1, 100);
		e.card = 0;
		procmodel_apply(m, &e);
	}
	/* One more process, no card: not a holder, not a slice of its own. */
	e = ev(DP_EVENT_FORK, NOPID + 7, 1, 100);
	procmodel_apply(m, &e);
	while (!done && calls < 100) {
		done = procmodel_refresh_sockets_until(m, &cursor, 0);
		calls++;
	}
	CHECK(done);
	/* One a holder, and one where a slice's slots ran out before one. */
	CHECK(calls >= 5 && calls <= 5 + (int)(procmodel_slots(m) / PROCMODEL_PASS_SLOTS) + 1);
	CHECK_INT(cursor, 0);
	calls = 0;
	do {
		size_t from = cursor;

		done = procmodel_refresh_sockets_until(m, &cursor, INT64_MAX);
		CHECK(done || cursor - from == PROCMODEL_PASS_SLOTS);
		calls++;
	} while (!done && calls < 100);
	CHECK(done);
	CHECK_INT(calls, (int)((procmodel_slots(m) + PROCMODEL_PASS_SLOTS - 1) / PROCMODEL_PASS_SLOTS));
	CHECK_INT(cursor, 0);
	procmodel_free(m);
}

/*
 * A holder without a socket at its first look is looked at again soon:
 * 2, 4, 8, 16, 32, 64 ms after (its server's socket often comes a moment
 * after its card), then the pass has it. This process (a real one, no
 * dynprof socket) is the holder.
 */
TEST(model_holder_without_a_socket_is_looked_at_soon_then_left_to_the_pass)
{
	struct recorder r;
	struct procmodel *m = test_model(&r);
	struct dp_event e;
	int64_t at, waits[8];
	int n = 0;

	REQUIRE(m != NULL);
	CHECK(procmodel_soon_next_ms(m) == INT64_MAX);
	e = ev(DP_EVENT_CARD_OPEN, getpid(), getppid(), 0);
	e.card = 0;
	procmodel_apply(m, &e);
	REQUIRE(procmodel_get(m, getpid()) && procmodel_get(m, getpid())->cards == 1);
	CHECK_INT(procmodel_get(m, getpid())->socket_state, PM_SOCKET_NONE);
	at = procmodel_get(m, getpid())->socket_read_ms;
	while (n < 8 && procmodel_soon_next_ms(m) != INT64_MAX) {
		int64_t next = procmodel_soon_next_ms(m);

		waits[n++] = next - at;
		procmodel_look_soon(m, next);
		at = next;
	}
	CHECK_INT(n, 6);
	for (int i = 0; i < n && i < 6; i++)
		CHECK_INT(waits[i], 2 << i);
	procmodel_free(m);
}

/*
 * A card open from the device check (fd DP_FD_UNCONFIRMED) counts only when
 * the fds show it: for a process that does not exist, never, however often
 * it is tried; the wait for it ends at OPENCHECK_GIVE_UP_MS at the latest.
 */
TEST(model_unconfirmed_open_is_not_applied_without_the_fd)
{
	struct recorder r;
	struct procmodel *m = test_model(&r);
	struct opencheck *c = opencheck_new();
	struct dp_event e;

	REQUIRE(m != NULL && c != NULL);
	e = ev(DP_EVENT_FORK, NOPID + 1, 1, 100);
	procmodel_apply(m, &e);
	e = ev(DP_EVENT_CARD_OPEN, NOPID + 1, 1, 100);
	e.card = 2;
	e.fd = DP_FD_UNCONFIRMED;
	procmodel_apply(m, &e);
	CHECK_INT(procmodel_get(m, NOPID + 1)->cards, 0);
	CHECK_INT(procmodel_confirm_open(m, &e), -ESRCH);
	/* A gone process leaves the wait at its first try. */
	CHECK_INT(opencheck_add(c, &e, 1000), 0);
	CHECK_INT(opencheck_add(c, &e, 1000), 0); /* the same open: one wait */
	CHECK_INT((int)opencheck_waiting(c), 1);
	CHECK_INT((int)opencheck_next_ms(c), 1001);
	opencheck_run(c, m, 1000); /* not due yet */
	CHECK_INT((int)opencheck_waiting(c), 1);
	opencheck_run(c, m, 1001);
	CHECK_INT((int)opencheck_waiting(c), 0);
	CHECK(opencheck_next_ms(c) == INT64_MAX);
	/* A confirmed CARD_OPEN (an fd) is applied as before. */
	e.fd = 3;
	procmodel_apply(m, &e);
	CHECK_INT(procmodel_get(m, NOPID + 1)->cards, 1 << 2);
	CHECK_STR(r.log, "exec:5000001:0 open:5000001:4");
	opencheck_free(c);
	procmodel_free(m);
}

/* The wait for one that cannot be told (fds unreadable) doubles, up to its give-up time. */
TEST(opencheck_waits_longer_each_time_then_gives_up)
{
	struct recorder r;
	struct procmodel *m = test_model(&r);
	struct opencheck *c = opencheck_new();
	struct dp_event e;
	int64_t now = 0;
	int tries = 0;

	REQUIRE(m != NULL && c != NULL);
	/* pid 1's fds: unreadable unless root; as root, not a card of ours: "not yet". */
	e = ev(DP_EVENT_CARD_OPEN, 1, 0, 0);
	e.card = 1;
	e.fd = DP_FD_UNCONFIRMED;
	CHECK_INT(opencheck_add(c, &e, now), 0);
	while (opencheck_waiting(c) && tries < 1000) {
		int64_t next = opencheck_next_ms(c);

		CHECK(next - now <= OPENCHECK_STEP_MAX_MS);
		now = next;
		opencheck_run(c, m, now);
		tries++;
	}
	CHECK_INT((int)opencheck_waiting(c), 0);
	CHECK(now >= OPENCHECK_GIVE_UP_MS && now < OPENCHECK_GIVE_UP_MS + OPENCHECK_STEP_MAX_MS);
	/* 1, 2, 4 ... 128, then 250 ms steps: about 8 + 20 tries in 5 s. */
	CHECK(tries > 20 && tries < 40);
	CHECK_STR(r.log, "");
	opencheck_free(c);
	procmodel_free(m);
}

UNIT_MAIN()
