// SPDX-License-Identifier: MIT
/*
 * The rule state machine (trigger/trigger_runs.h) against a fake session:
 * one fake target that answers START with a chosen status, counts the
 * commands it got and its connection's requests. send_start/send_stop do
 * what trigger_round.c does with the session: no START to a target that
 * collects already, a fresh connection when START and STOP would not fit.
 */
#include <stdbool.h>

#include "dynprof/proto.h"
#include "session/server_limits.h"
#include "trigger/trigger_runs.h"
#include "unit.h"

struct fake_target {
	bool collecting, live;
	int answer;   /* what START is answered with */
	int requests; /* on this connection */
	int starts, stops, reconnects;
	int64_t now_us; /* when the last answer came */
};

/* A 9.x server's request limit, as the trigger engine asks it before a START (idle aside). */
static bool needs_reconnect(int requests, bool collecting)
{
	struct server_limits l;
	struct server_count c = { .commands = requests, .collecting = collecting };

	server_limits_for(&l, PROTO_V2, SOCK_FLAVOUR_FILE, NULL);
	return server_needs_reconnect(&l, &c, 0, true) != SERVER_KEEP;
}

static struct fake_target fresh(void)
{
	return (struct fake_target){ .live = true, .answer = PROTO_OK, .now_us = 1000 };
}

static struct run_answer answer(const struct fake_target *t, int status)
{
	return (struct run_answer){
		.collecting = t->collecting, .live = t->live, .status = status, .ack_us = t->now_us
	};
}

/* The round's START for the runs of one target that asked for it. */
static unsigned send_start(struct fake_target *t, struct rule_run *runs, int n, int64_t now_ms)
{
	unsigned todo = 0;
	int status = PROTO_OK;

	if (!t->collecting) {
		if (needs_reconnect(t->requests, t->collecting)) {
			t->requests = 0;
			t->reconnects++;
		}
		t->requests++;
		t->starts++;
		t->now_us += 10;
		status = t->answer;
		t->collecting = status == PROTO_OK;
	}
	for (int r = 0; r < n; r++) {
		struct run_answer a = answer(t, status);

		todo |= run_start_answered(&runs[r], &a, now_ms, 0);
	}
	return todo;
}

static unsigned send_stop(struct fake_target *t, struct rule_run *runs, int n, const struct run_rule *w)
{
	unsigned todo = 0;

	t->requests++;
	t->stops++;
	t->now_us += 10;
	t->collecting = false;
	for (int r = 0; r < n; r++) {
		struct run_answer a = answer(t, PROTO_OK);

		todo |= run_stop_answered(&runs[r], w, &a);
	}
	return todo;
}

static const struct run_rule forever = { .repeat = 0, .has_stop = true };

TEST(test_window_opens_and_closes)
{
	struct fake_target t = fresh();
	struct rule_run run = { 0 };

	CHECK_INT(run_start_fired(&run, 500, 7), RUN_DO_START);
	CHECK_INT(run.state, RUN_FIRED);
	CHECK_INT(run.start_fired_us, 500);
	CHECK_INT(run.start_count, 7);
	CHECK_INT(send_start(&t, &run, 1, 50), RUN_DO_WAIT_STOP);
	CHECK_INT(run.state, RUN_OPEN);
	CHECK_INT(run.windows, 1);
	CHECK_INT(run.opened_ms, 50);
	CHECK_INT(run.start_ack_us, t.now_us);
	CHECK_INT(run_stop_fired(&run, &forever, 2000, false), RUN_DO_STOP);
	CHECK_INT(run.state, RUN_STOPPING);
	CHECK_INT(run.stop_fired_us, 2000);
	CHECK_INT(send_stop(&t, &run, 1, &forever), RUN_DO_RECORD | RUN_DO_WAIT_START);
	CHECK_INT(run.state, RUN_ARMED);
	CHECK_INT(run.stop_ack_us, t.now_us);
	CHECK_INT(t.starts, 1);
	CHECK_INT(t.stops, 1);
	/* A second firing starts anew: the stop's time is cleared. */
	run_start_fired(&run, 3000, 0);
	CHECK_INT(run.stop_fired_us, 0);
}

/* Two rules' windows overlap on one target: one START (the first opens), one STOP (the last closes). */
TEST(test_overlapping_rules_share_one_collection)
{
	struct fake_target t = fresh();
	struct rule_run runs[2] = { 0 };

	CHECK_INT(run_start_fired(&runs[0], 100, 0), RUN_DO_START);
	send_start(&t, runs, 2, 10);
	CHECK_INT(runs[0].state, RUN_OPEN);
	CHECK_INT(runs[1].state, RUN_ARMED);
	CHECK_INT(run_start_fired(&runs[1], 200, 0), RUN_DO_START);
	send_start(&t, runs, 2, 20); /* collecting already: answered at once */
	CHECK_INT(runs[1].state, RUN_OPEN);
	CHECK_INT(runs[0].windows, 1);
	CHECK_INT(t.starts, 1);
	/* The first stop: the other window holds the collection, no STOP. */
	CHECK(runs_other_open(runs, 2, 0));
	CHECK_INT(run_stop_fired(&runs[0], &forever, 300, runs_other_open(runs, 2, 0)),
		  RUN_DO_RECORD | RUN_DO_WAIT_START);
	CHECK_INT(runs[0].state, RUN_ARMED);
	CHECK_INT(runs[0].stop_ack_us, 300);
	CHECK(!runs_other_open(runs, 2, 1));
	CHECK_INT(run_stop_fired(&runs[1], &forever, 400, runs_other_open(runs, 2, 1)), RUN_DO_STOP);
	send_stop(&t, runs, 2, &forever);
	CHECK_INT(runs[1].state, RUN_ARMED);
	CHECK_INT(runs[0].state, RUN_ARMED); /* not touched by the STOP it did not ask for */
	CHECK_INT(t.starts, 1);
	CHECK_INT(t.stops, 1);
}

/* One window of the rule, closed, with the fake target. */
static unsigned one_window(struct fake_target *t, struct rule_run *run, const struct run_rule *w)
{
	run_start_fired(run, 0, 0);
	send_start(t, run, 1, 0);
	run_stop_fired(run, w, 0, false);
	return send_stop(t, run, 1, w);
}

TEST(test_repeat_counts_windows)
{
	struct fake_target t = fresh();
	struct run_rule twice = { .repeat = 2, .has_stop = true };
	struct rule_run run = { 0 };

	CHECK_INT(one_window(&t, &run, &twice), RUN_DO_RECORD | RUN_DO_WAIT_START);
	CHECK_INT(run.state, RUN_ARMED);
	CHECK_INT(one_window(&t, &run, &twice), RUN_DO_RECORD);
	CHECK_INT(run.state, RUN_DONE);
	CHECK_INT(run.windows, 2);
	CHECK_INT(run_start_fired(&run, 0, 0), 0); /* done is done */
	CHECK_INT(run.state, RUN_DONE);
	/* repeat 0: no limit */
	run = (struct rule_run){ 0 };
	for (int k = 0; k < 60; k++)
		one_window(&t, &run, &forever);
	CHECK_INT(run.state, RUN_ARMED);
	CHECK_INT(run.windows, 60);
}

TEST(test_not_set_device_backs_off_to_3200_ms)
{
	struct fake_target t = fresh();
	struct rule_run run = { 0 };
	static const int64_t delays[] = { 100, 200, 400, 800, 1600, 3200, 3200, 3200 };
	int64_t now = 1000;

	t.answer = PROTO_NOT_SET_DEVICE;
	run_start_fired(&run, 0, 0);
	/* The first time only: the stop begins running, and it is said. */
	CHECK_INT(send_start(&t, &run, 1, now), RUN_DO_WAIT_STOP | RUN_DO_NO_DEVICE);
	for (size_t k = 0; k < sizeof(delays) / sizeof(delays[0]); k++) {
		CHECK_INT(run.state, RUN_STARTING);
		CHECK_INT(run.retry_ms, now + delays[k]);
		CHECK_INT(run_retry_due(&run, run.retry_ms - 1), 0);
		CHECK_INT(run_retry_due(&run, run.retry_ms), RUN_DO_START);
		now = run.retry_ms;
		if (k + 1 < sizeof(delays) / sizeof(delays[0]))
			CHECK_INT(send_start(&t, &run, 1, now), 0);
	}
	t.answer = PROTO_OK;
	CHECK_INT(send_start(&t, &run, 1, now), RUN_DO_WAIT_STOP);
	CHECK_INT(run.state, RUN_OPEN);
	CHECK_INT(run.windows, 1);
	/* A new firing backs off from 100 ms again. */
	run_stop_fired(&run, &forever, 0, false);
	send_stop(&t, &run, 1, &forever);
	t.answer = PROTO_NOT_SET_DEVICE;
	run_start_fired(&run, 0, 0);
	send_start(&t, &run, 1, 5000);
	CHECK_INT(run.retry_ms, 5100);
}

TEST(test_start_failure_ends_the_rule)
{
	struct fake_target t = fresh();
	struct rule_run run = { 0 };

	t.answer = PROTO_FAIL;
	run_start_fired(&run, 0, 0);
	CHECK_INT(send_start(&t, &run, 1, 0), 0);
	CHECK_INT(run.state, RUN_DONE);
	CHECK_INT(run.windows, 0);
	/* No device, but the target left meanwhile: no retry. */
	run = (struct rule_run){ 0 };
	t = fresh();
	t.answer = PROTO_NOT_SET_DEVICE;
	t.live = false;
	run_start_fired(&run, 0, 0);
	send_start(&t, &run, 1, 0);
	CHECK_INT(run.state, RUN_DONE);
}

/*
 * 9.x ends the connection after answering its 101st request: a START that
 * would leave no room for its STOP before that reconnects first.
 */
TEST(test_reconnect_before_the_101st_request)
{
	struct fake_target t = fresh();
	struct rule_run run = { 0 };
	int windows = 0;

	CHECK(!needs_reconnect(PROTO_V2_MAX_REQUESTS - SERVER_WINDOW_REQUESTS - 1, false));
	CHECK(needs_reconnect(PROTO_V2_MAX_REQUESTS - SERVER_WINDOW_REQUESTS, false));
	CHECK(!needs_reconnect(PROTO_V2_MAX_REQUESTS - SERVER_WINDOW_REQUESTS, true));
	for (; windows < 120; windows++) {
		one_window(&t, &run, &forever);
		/* The 101st would be answered and then disconnected: never reached. */
		CHECK(t.requests < PROTO_V2_MAX_REQUESTS);
	}
	CHECK_INT(run.windows, 120);
	CHECK_INT(t.reconnects, 2);
}

TEST(test_target_leaving_mid_window)
{
	struct fake_target t = fresh();
	struct rule_run runs[3] = { 0 };

	run_start_fired(&runs[0], 0, 0);
	send_start(&t, runs, 3, 0); /* runs[0] open */
	run_start_fired(&runs[1], 0, 0);
	send_start(&t, runs, 3, 0);
	run_stop_fired(&runs[1], &forever, 0, false); /* runs[1] stopping */
	CHECK_INT(run_target_left(&runs[0], 9000), RUN_DO_RECORD);
	CHECK_INT(runs[0].state, RUN_DONE);
	CHECK_INT(runs[0].stop_fired_us, 9000);
	CHECK_INT(runs[0].stop_ack_us, 9000);
	CHECK_INT(run_target_left(&runs[1], 9000), RUN_DO_RECORD);
	CHECK_INT(run_target_left(&runs[2], 9000), 0); /* armed: nothing to record */
	CHECK_INT(runs[2].state, RUN_DONE);
	/* A STOP answered by a target that left: no window recorded twice. */
	runs[1] = (struct rule_run){ .state = RUN_STOPPING };
	t.live = false;
	CHECK_INT(send_stop(&t, &runs[1], 1, &forever), 0);
	CHECK_INT(runs[1].state, RUN_DONE);
}

/* The stop fires while START is still retried (no device yet): no window, armed again. */
TEST(test_stop_before_start_acknowledged)
{
	struct fake_target t = fresh();
	struct rule_run run = { 0 };

	t.answer = PROTO_NOT_SET_DEVICE;
	run_start_fired(&run, 0, 0);
	send_start(&t, &run, 1, 0);
	CHECK_INT(run_stop_fired(&run, &forever, 0, false), 0); /* not open: no STOP */
	CHECK_INT(run.state, RUN_STARTING);
	CHECK_INT(run_stop_before_start(&run), RUN_DO_WAIT_START);
	CHECK_INT(run.state, RUN_ARMED);
	CHECK_INT(run.windows, 0);
	CHECK_INT(run_retry_due(&run, 1 << 30), 0);
	CHECK_INT(t.stops, 0);
	CHECK_INT(run_stop_before_start(&run), 0); /* only from STARTING */
}

TEST(test_console_stop_and_quit_close_the_window)
{
	struct fake_target t = fresh();
	struct rule_run run = { 0 };

	run_start_fired(&run, 0, 0);
	send_start(&t, &run, 1, 0);
	CHECK_INT(run_collection_ended(&run, &forever, 4242), RUN_DO_RECORD | RUN_DO_WAIT_START);
	CHECK_INT(run.stop_ack_us, 4242);
	CHECK_INT(run.state, RUN_ARMED);
	CHECK_INT(run_collection_ended(&run, &forever, 1), 0);
	CHECK_INT(run_quit(&run, 5000), 0); /* armed: stays */
	CHECK_INT(run.state, RUN_ARMED);
	t.collecting = false;
	run_start_fired(&run, 0, 0);
	send_start(&t, &run, 1, 0);
	CHECK_INT(run_quit(&run, 5000), RUN_DO_RECORD);
	CHECK_INT(run.state, RUN_DONE);
	CHECK_INT(run.stop_ack_us, 5000);
}

/* A condition that can never be met (a threshold not armed): no window waits for it. */
TEST(test_failed_rule_opens_no_more_windows)
{
	struct fake_target t = fresh();
	struct rule_run run = { 0 };

	run_failed(&run);
	CHECK_INT(run.state, RUN_DONE);
	run = (struct rule_run){ 0 };
	run_start_fired(&run, 0, 0);
	send_start(&t, &run, 1, 0);
	run_failed(&run); /* its stop could not be armed: it stays open until ended */
	CHECK_INT(run.state, RUN_OPEN);
	CHECK_INT(run_collection_ended(&run, &forever, 1), RUN_DO_RECORD);
	CHECK_INT(run.state, RUN_DONE);
}

TEST(test_runs_widen_keeps_each_targets_runs)
{
	struct rule_run *runs = runs_new(3, 2);

	REQUIRE(runs);
	for (int i = 0; i < 3; i++)
		for (int r = 0; r < 2; r++)
			runs[i * 2 + r].windows = 10 * i + r + 1;
	REQUIRE(runs_widen(&runs, 3, 2) == 0);
	for (int i = 0; i < 3; i++) {
		CHECK_INT(runs[i * 3 + 0].windows, 10 * i + 1);
		CHECK_INT(runs[i * 3 + 1].windows, 10 * i + 2);
		CHECK_INT(runs[i * 3 + 2].windows, 0);
		CHECK_INT(runs[i * 3 + 2].state, RUN_ARMED);
	}
	runs_free(runs);
	/* No rule yet: the table holds one placeholder per target. */
	runs = runs_new(4, 0);
	REQUIRE(runs);
	runs[3].windows = 7; /* the placeholder is not a rule: not kept */
	REQUIRE(runs_widen(&runs, 4, 0) == 0);
	for (int i = 0; i < 4; i++)
		CHECK_INT(runs[i].windows, 0);
	runs_free(runs);
}

UNIT_MAIN()
