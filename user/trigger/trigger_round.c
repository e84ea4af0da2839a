// SPDX-License-Identifier: MIT
/*
 * The rule state machine (trigger_runs.c) driven against the session: each
 * round, every rule on every target is stepped with what its conditions
 * and its target say, the transitions' requests are carried out (fired
 * edges told, windows recorded, conditions begun), and the START/STOP of
 * all targets due in one round are sent together. Targets are read only
 * through session.h's accessors.
 */
#include <string.h>

#include "shared/clock.h"
#include "report/events_out.h"
#include "report/report.h"
#include "trigger/trigger_calls.h"
#include "trigger/trigger_cond.h"
#include "trigger/triggers_impl.h"

/* This round's commands, per target (the engine's arrays: as many as its slots). */
struct sends {
	bool *start, *stop;
};

static const char *edge_name(bool start)
{
	return start ? "start" : "stop";
}

static bool timed(const struct condition *c)
{
	return c->kind == COND_SLOW || c->kind == COND_GAP || c->kind == COND_STALL;
}

static const char *measured_name(const struct condition *c)
{
	return c->kind == COND_SLOW ? "duration" : c->kind == COND_GAP ? "gap" : "stalled";
}

static void announce(struct triggers *tg, int i, int r, bool start, uint64_t count,
		     const struct trigger_measure *m)
{
	const struct condition *c = start ? &tg->rules[r].start : &tg->rules[r].stop;
	int pid = target_pid(tg, i);

	if (c->kind == COND_CALL)
		report_info("rule %d: %s=%s fired for pid %d (call %llu)", r + 1, edge_name(start),
			    c->text, pid, (unsigned long long)count);
	else if (timed(c))
		report_info("rule %d: %s=%s fired for pid %d (%s %.3f ms, typical %.3f ms)", r + 1,
			    edge_name(start), c->text, pid, measured_name(c), m->value_ns / 1e6,
			    m->typical_ns / 1e6);
	else
		report_info("rule %d: %s=%s fired for pid %d", r + 1, edge_name(start), c->text, pid);
	if (timed(c))
		events_trigger_measured(pid, r + 1, edge_name(start), c->text, m->value_ns, m->typical_ns);
	else
		events_trigger(pid, r + 1, edge_name(start), c->text, c->kind == COND_CALL, count);
}

static int probe_of(const struct triggers *tg, const struct condition *c)
{
	return trigger_calls_probe_id(tg->calls, c);
}

/* What a timed condition measured when it fired: the record's, or for stall: read now. */
static struct trigger_measure measure_of(const struct triggers *tg, int i,
					 const struct condition *c, const struct phase *ph)
{
	struct trigger_measure m = { 0, 0 };
	int probe = probe_of(tg, c);

	if (probe < 0)
		return m;
	if (c->kind == COND_STALL) {
		if (!trigger_calls_stalled(tg, i, probe, ph->since_ms, &m))
			m = (struct trigger_measure){ 0, 0 };
		return m;
	}
	return timed(c) ? trigger_calls_measure(tg, i, probe) : m;
}

/* The last count seen (the threshold that fired). */
static uint64_t probe_count(const struct triggers *tg, int i, const struct condition *c)
{
	int probe = probe_of(tg, c);

	return probe < 0 ? 0 : trigger_calls_seen(tg, i, probe);
}

/* The kernel's count now (not the last threshold seen): how far the target ran on. */
static uint64_t live_count(const struct triggers *tg, int i, const struct condition *c)
{
	int probe = probe_of(tg, c);

	return probe < 0 ? 0 : trigger_calls_now(tg, i, probe);
}

static struct run_rule rule_of(const struct triggers *tg, int r)
{
	return (struct run_rule){ .repeat = tg->rules[r].repeat,
				  .has_stop = tg->rules[r].stop.kind != COND_NONE };
}

static struct run_answer answer_of(const struct triggers *tg, int i, int64_t ack_us)
{
	return (struct run_answer){
		.collecting = session_target_collecting(tg->s, i),
		.live = session_target_live(tg->s, i),
		.status = session_target_last_status(tg->s, i),
		.ack_us = ack_us,
	};
}

/* Begin waiting for `c`; a threshold that cannot be armed fails the rule here. */
static void wait_for(struct triggers *tg, int i, int r, const struct condition *c, uint64_t call_base)
{
	if (trigger_phase_begin(tg, c, i, call_base, &run_of(tg, i, r)->phase))
		run_failed(run_of(tg, i, r));
}

static void want(struct sends *out, int i, unsigned todo)
{
	out->start[i] |= (todo & RUN_DO_START) != 0;
	out->stop[i] |= (todo & RUN_DO_STOP) != 0;
}

/* After a window closed: recorded; a repeated start waits for a new occurrence, counting calls from here. */
static void after_close(struct triggers *tg, int i, int r, unsigned todo)
{
	if (todo & RUN_DO_RECORD)
		trigger_record_window(tg, i, r);
	if (todo & RUN_DO_WAIT_START)
		wait_for(tg, i, r, &tg->rules[r].start, live_count(tg, i, &tg->rules[r].start));
}

/* Calls of the stop count from the start's trigger when both count the same function. */
static uint64_t stop_base(const struct triggers *tg, int i, int r)
{
	const struct condition *start = &tg->rules[r].start, *stop = &tg->rules[r].stop;

	if (probe_of(tg, stop) >= 0 && probe_of(tg, stop) == probe_of(tg, start))
		return run_of(tg, i, r)->start_count;
	/* Not the last count seen: the function may have run on unwatched since. */
	return live_count(tg, i, stop);
}

static bool start_due(struct triggers *tg, int i, int r)
{
	const struct window_rule *w = &tg->rules[r];
	const struct rule_run *run = run_of(tg, i, r);

	if (w->every_ms && run->windows > 0)
		return clock_ms() >= run->opened_ms + w->every_ms;
	return trigger_cond_met(tg, &w->start, i, &run->phase);
}

/* Some other window keeps target i collecting (another rule, or the console's). */
static bool others_hold(const struct triggers *tg, int i, int except)
{
	return session_window_open(tg->s) || runs_other_open(run_of(tg, i, 0), tg->nrules, except);
}

static void fire_start(struct triggers *tg, int i, int r, struct sends *out)
{
	struct rule_run *run = run_of(tg, i, r);
	struct trigger_measure m = measure_of(tg, i, &tg->rules[r].start, &run->phase);
	unsigned todo = run_start_fired(run, clock_wall_us(), probe_count(tg, i, &tg->rules[r].start));

	run_measured(run, true, m.value_ns, m.typical_ns);
	announce(tg, i, r, true, run->start_count, &m);
	want(out, i, todo);
}

static void fire_stop(struct triggers *tg, int i, int r, struct sends *out)
{
	struct run_rule w = rule_of(tg, r);
	int64_t now = clock_wall_us();
	struct trigger_measure m = measure_of(tg, i, &tg->rules[r].stop, &run_of(tg, i, r)->phase);
	unsigned todo;

	run_measured(run_of(tg, i, r), false, m.value_ns, m.typical_ns);
	announce(tg, i, r, false, probe_count(tg, i, &tg->rules[r].stop), &m);
	todo = run_stop_fired(run_of(tg, i, r), &w, now, others_hold(tg, i, r));
	after_close(tg, i, r, todo);
	want(out, i, todo);
}

static bool stop_met(const struct triggers *tg, int i, int r)
{
	const struct condition *stop = &tg->rules[r].stop;

	return stop->kind != COND_NONE && trigger_cond_met(tg, stop, i, &run_of(tg, i, r)->phase);
}

static void step_run(struct triggers *tg, int i, int r, struct sends *out)
{
	struct rule_run *run = run_of(tg, i, r);
	struct run_rule w = rule_of(tg, r);
	int64_t reply_us;

	switch (run->state) {
	case RUN_ARMED:
		if (start_due(tg, i, r))
			fire_start(tg, i, r, out);
		break;
	case RUN_STARTING:
		if (stop_met(tg, i, r)) {
			report_info("rule %d: %s fired before pid %d had a device: no window",
				    r + 1, tg->rules[r].stop.text, target_pid(tg, i));
			if (run_stop_before_start(run) & RUN_DO_WAIT_START)
				wait_for(tg, i, r, &tg->rules[r].start,
					 probe_count(tg, i, &tg->rules[r].start));
		} else
			want(out, i, run_retry_due(run, clock_ms()));
		break;
	case RUN_OPEN:
		if (!session_target_collecting(tg->s, i)) { /* stopped from the console, or the server ended it */
			reply_us = session_target_last_reply_us(tg->s, i);
			after_close(tg, i, r,
				    run_collection_ended(run, &w, reply_us ? reply_us : clock_wall_us()));
		} else if (stop_met(tg, i, r))
			fire_stop(tg, i, r, out);
		break;
	default:
		break;
	}
}

/* ---- sending what is due --------------------------------------------------- */

/* The connection must have room for this window's START and STOP, and not be near its idle limit. */
static void make_room(struct triggers *tg, int i)
{
	if (session_keep_connection(tg->s, i, true)) {
		/* Printed, and the target dropped: the next round lets it go. */
	}
}

/* START's outcome for target i (acknowledged at ack_us when it collects). */
static void after_start(struct triggers *tg, int i, int64_t ack_us)
{
	struct run_answer a = answer_of(tg, i, ack_us);

	for (int r = 0; r < tg->nrules; r++) {
		struct rule_run *run = run_of(tg, i, r);
		unsigned todo;

		if (run->state != RUN_FIRED && run->state != RUN_STARTING)
			continue;
		todo = run_start_answered(run, &a, clock_ms(),
					  a.collecting ? live_count(tg, i, &tg->rules[r].start) : 0);
		if (todo & RUN_DO_NO_DEVICE) {
			report_info("rule %d: pid %d has no device yet: START retried until it has",
				    r + 1, target_pid(tg, i));
			/* The stop condition runs meanwhile: if it fires first, no window. */
			wait_for(tg, i, r, &tg->rules[r].stop, probe_count(tg, i, &tg->rules[r].stop));
		} else if (todo & RUN_DO_WAIT_STOP)
			wait_for(tg, i, r, &tg->rules[r].stop, stop_base(tg, i, r));
	}
}

static void after_stop(struct triggers *tg, int i)
{
	struct run_answer a = answer_of(tg, i, session_target_last_reply_us(tg->s, i));

	for (int r = 0; r < tg->nrules; r++) {
		struct run_rule w = rule_of(tg, r);

		after_close(tg, i, r, run_stop_answered(run_of(tg, i, r), &w, &a));
	}
}

static bool any(const bool *which, int n)
{
	for (int i = 0; i < n; i++)
		if (which[i])
			return true;
	return false;
}

static void send_due(struct triggers *tg, struct sends *out)
{
	int n = tg->known;

	/* Targets already collecting (for the console or another rule) need no START. */
	for (int i = 0; i < n; i++) {
		if (out->start[i] && session_target_collecting(tg->s, i)) {
			out->start[i] = false;
			after_start(tg, i, clock_wall_us());
		} else if (out->start[i])
			make_room(tg, i);
	}
	/* Each reply is told when it came (trigger_replied): a hung target delays only its own. */
	if (any(out->start, n))
		session_command_some(tg->s, PROTO_CMD_START, out->start);
	if (any(out->stop, n))
		session_command_some(tg->s, PROTO_CMD_STOP, out->stop);
}

void trigger_replied(void *ctx, int index, enum proto_command cmd)
{
	struct triggers *tg = ctx;

	if (index >= tg->known || tg->gone[index])
		return;
	if (cmd == PROTO_CMD_START)
		after_start(tg, index, session_target_last_reply_us(tg->s, index));
	else if (cmd == PROTO_CMD_STOP)
		after_stop(tg, index);
}

bool trigger_evaluate(struct triggers *tg)
{
	struct sends out = { tg->send_start, tg->send_stop };
	bool sent;

	if (!tg->nrules) /* no run to step (with 1000 targets, a pass over them every round) */
		return false;
	/* The session reads `which` for each of its slots: all of them are cleared. */
	memset(out.start, 0, (size_t)tg->room * sizeof(*out.start));
	memset(out.stop, 0, (size_t)tg->room * sizeof(*out.stop));
	for (int i = 0; i < tg->known; i++)
		for (int r = 0; !tg->gone[i] && r < tg->nrules; r++)
			step_run(tg, i, r, &out);
	sent = any(out.start, tg->known) || any(out.stop, tg->known);
	send_due(tg, &out);
	return sent;
}

/* ---- targets coming and going, the end ----------------------------------- */

void trigger_runs_take_in(struct triggers *tg, int i)
{
	for (int r = 0; r < tg->nrules; r++) {
		struct rule_run *run = run_of(tg, i, r);

		if (run->state == RUN_DONE)
			continue;
		/*
		 * The first window's start counts from the rule's beginning (the
		 * run's, or when it was added), and calls from the join; in follow
		 * mode, which runs for days, the time from the join (wait_for's
		 * phase begins now).
		 */
		wait_for(tg, i, r, &tg->rules[r].start, 0);
		if (!session_is_follow(tg->s))
			run->phase.since_ms = tg->origin[r].since_ms;
		run->phase.sig_base = tg->origin[r].sig_base;
		run->phase.file_base = tg->origin[r].file_base;
	}
}

void trigger_runs_let_go(struct triggers *tg, int i)
{
	for (int r = 0; r < tg->nrules; r++)
		if (run_target_left(run_of(tg, i, r), clock_wall_us()) & RUN_DO_RECORD)
			trigger_record_window(tg, i, r);
}

void trigger_runs_quit(struct triggers *tg)
{
	for (int i = 0; i < tg->known; i++)
		for (int r = 0; !tg->gone[i] && r < tg->nrules; r++)
			if (run_quit(run_of(tg, i, r), clock_wall_us()) & RUN_DO_RECORD)
				trigger_record_window(tg, i, r);
}

static int64_t run_due_ms(const struct triggers *tg, int i, int r)
{
	const struct rule_run *run = run_of(tg, i, r);
	const struct window_rule *w = &tg->rules[r];
	int64_t now = clock_ms();

	switch (run->state) {
	case RUN_ARMED:
		if (w->every_ms && run->windows > 0)
			return run->opened_ms + w->every_ms > now ? run->opened_ms + w->every_ms - now :
								    0;
		return trigger_cond_due_in(tg, &w->start, i, &run->phase);
	case RUN_STARTING:
		return run->retry_ms > now ? run->retry_ms - now : 0;
	case RUN_OPEN:
		return trigger_cond_due_in(tg, &w->stop, i, &run->phase);
	default:
		return -1;
	}
}

int64_t trigger_runs_due_ms(const struct triggers *tg)
{
	int64_t due = -1;

	for (int i = 0; tg->nrules && i < tg->known; i++)
		for (int r = 0; !tg->gone[i] && r < tg->nrules; r++)
			due = clock_sooner(due, run_due_ms(tg, i, r));
	return due;
}
