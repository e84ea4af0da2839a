// SPDX-License-Identifier: MIT
/*
 * One rule on one target (see triggers_impl.h's run states): when its start
 * and stop are due, the window it opens and closes, and the START/STOP of
 * all targets due in one round sent together.
 */
#include <string.h>

#include "shared/fdio.h"
#include "out/events_out.h"
#include "out/report.h"
#include "trigger/triggers_impl.h"

#define RETRY_FIRST_MS 100  /* NOT_SET_DEVICE: first retry after this */
#define RETRY_MAX_MS 3200   /* ... doubling up to this */
#define RECONNECT_MARGIN 2  /* START + STOP must fit in the connection's requests */


static const char *edge_name(bool start)
{
	return start ? "start" : "stop";
}

static void announce(struct triggers *tg, int i, int r, bool start, uint64_t count)
{
	const struct condition *c = start ? &tg->rules[r].start : &tg->rules[r].stop;
	int pid = tg->s->targets[i].pid;

	if (c->kind == COND_CALL)
		report_info("rule %d: %s=%s fired for pid %d (call %llu)", r + 1, edge_name(start), c->text, pid,
			    (unsigned long long)count);
	else
		report_info("rule %d: %s=%s fired for pid %d", r + 1, edge_name(start), c->text, pid);
	events_trigger(pid, r + 1, edge_name(start), c->text, c->kind == COND_CALL, count);
}

static uint64_t probe_count(const struct triggers *tg, int i, const struct condition *c)
{
	int probe = c->kind == COND_CALL ? trigger_probe_id(tg, c) : -1;

	return probe < 0 ? 0 : *count_of(tg, i, probe);
}

/* Some other window keeps target i collecting (another rule, or the console's). */
static bool others_hold(const struct triggers *tg, int i, int except)
{
	if (tg->s->window_open)
		return true;
	for (int r = 0; r < tg->nrules; r++)
		if (r != except && run_of(tg, i, r)->state == RUN_OPEN)
			return true;
	return false;
}

/* The kernel's count now (not the last threshold seen): how far the target ran on. */
static uint64_t live_count(const struct triggers *tg, int i, const struct condition *c)
{
	int probe = c->kind == COND_CALL ? trigger_probe_id(tg, c) : -1;

	return probe < 0 ? 0 : callcount_read(tg->cc, tg->s->targets[i].pid, (unsigned)probe);
}

static void fire_start(struct triggers *tg, int i, int r)
{
	struct rule_run *run = run_of(tg, i, r);

	run->start_fired_us = clock_wall_us();
	run->stop_fired_us = 0;
	run->start_count = probe_count(tg, i, &tg->rules[r].start);
	run->state = RUN_FIRED;
	run->retry_delay_ms = RETRY_FIRST_MS;
	announce(tg, i, r, true, run->start_count);
	tg->want_start[i] = true;
}

static void window_opened(struct triggers *tg, int i, int r, int64_t ack_us)
{
	struct rule_run *run = run_of(tg, i, r);
	const struct condition *stop = &tg->rules[r].stop;
	/* Calls of the stop count from the start's trigger when both count the same function. */
	uint64_t base = stop->kind == COND_CALL && tg->rules[r].start.kind == COND_CALL &&
					trigger_probe_id(tg, stop) == trigger_probe_id(tg, &tg->rules[r].start) ?
				run->start_count : probe_count(tg, i, stop);

	run->state = RUN_OPEN;
	run->windows++;
	run->opened_ms = clock_ms();
	run->start_ack_us = ack_us;
	run->ack_count = live_count(tg, i, &tg->rules[r].start);
	trigger_phase_begin(tg, stop, i, base, &run->phase);
}

static bool more_windows(const struct window_rule *w, const struct rule_run *run)
{
	return w->repeat == 0 || run->windows < w->repeat;
}

static void window_closed(struct triggers *tg, int i, int r, int64_t ack_us)
{
	struct rule_run *run = run_of(tg, i, r);
	const struct window_rule *w = &tg->rules[r];

	trigger_record_window(tg, i, r, ack_us);
	if (!more_windows(w, run)) {
		run->state = RUN_DONE;
		return;
	}
	run->state = RUN_ARMED;
	/* A repeated start waits for a new occurrence, counting calls from here. */
	trigger_phase_begin(tg, &w->start, i, live_count(tg, i, &w->start), &run->phase);
}

static bool start_due(struct triggers *tg, int i, int r)
{
	const struct window_rule *w = &tg->rules[r];
	const struct rule_run *run = run_of(tg, i, r);

	if (w->every_ms && run->windows > 0)
		return clock_ms() >= run->opened_ms + w->every_ms;
	return trigger_cond_met(tg, &w->start, i, &run->phase);
}

static void fire_stop(struct triggers *tg, int i, int r)
{
	struct rule_run *run = run_of(tg, i, r);

	run->stop_fired_us = clock_wall_us();
	announce(tg, i, r, false, probe_count(tg, i, &tg->rules[r].stop));
	if (others_hold(tg, i, r)) { /* the target keeps collecting for them */
		window_closed(tg, i, r, clock_wall_us());
		return;
	}
	run->state = RUN_STOPPING;
	tg->want_stop[i] = true;
}

static void step_run(struct triggers *tg, int i, int r)
{
	struct rule_run *run = run_of(tg, i, r);
	const struct target *t = &tg->s->targets[i];
	const struct condition *stop = &tg->rules[r].stop;

	switch (run->state) {
	case RUN_ARMED:
		if (start_due(tg, i, r))
			fire_start(tg, i, r);
		break;
	case RUN_STARTING:
		if (stop->kind != COND_NONE && trigger_cond_met(tg, stop, i, &run->phase)) {
			report_info("rule %d: %s fired before pid %d had a device: no window", r + 1, stop->text, t->pid);
			run->state = RUN_ARMED;
			trigger_phase_begin(tg, &tg->rules[r].start, i, probe_count(tg, i, &tg->rules[r].start),
					    &run->phase);
		} else if (clock_ms() >= run->retry_ms)
			tg->want_start[i] = true;
		break;
	case RUN_OPEN:
		if (!t->collecting) /* stopped from the console, or the server ended it */
			window_closed(tg, i, r, t->last_reply_us ? t->last_reply_us : clock_wall_us());
		else if (stop->kind != COND_NONE && trigger_cond_met(tg, stop, i, &run->phase))
			fire_stop(tg, i, r);
		break;
	default:
		break;
	}
}

/* ---- sending what is due --------------------------------------------------- */

/* The connection must have room for this window's START and STOP. */
static void make_room(struct triggers *tg, int i)
{
	struct target *t = &tg->s->targets[i];

	if (!t->collecting && t->requests + RECONNECT_MARGIN >= PROTO_MAX_REQUESTS_PER_CONN &&
	    session_reconnect(tg->s, i)) {
		/* Printed, and the target dropped: the next round lets it go. */
	}
}

/* START's outcome for target i (acknowledged at ack_us when it collects). */
static void after_start(struct triggers *tg, int i, int64_t ack_us)
{
	const struct target *t = &tg->s->targets[i];

	for (int r = 0; r < tg->nrules; r++) {
		struct rule_run *run = run_of(tg, i, r);

		if (run->state != RUN_FIRED && run->state != RUN_STARTING)
			continue;
		if (t->collecting)
			window_opened(tg, i, r, ack_us);
		else if (!t->dropped && t->last_status == PROTO_NOT_SET_DEVICE) {
			if (run->state == RUN_FIRED) {
				report_info("rule %d: pid %d has no device yet: START retried until it has", r + 1, t->pid);
				/* The stop condition runs meanwhile: if it fires first, no window. */
				trigger_phase_begin(tg, &tg->rules[r].stop, i, probe_count(tg, i, &tg->rules[r].stop),
						    &run->phase);
			}
			run->state = RUN_STARTING;
			run->retry_ms = clock_ms() + run->retry_delay_ms;
			if (run->retry_delay_ms < RETRY_MAX_MS)
				run->retry_delay_ms *= 2;
		} else
			run->state = RUN_DONE;
	}
}

static void after_stop(struct triggers *tg, int i)
{
	const struct target *t = &tg->s->targets[i];

	for (int r = 0; r < tg->nrules; r++) {
		if (run_of(tg, i, r)->state != RUN_STOPPING)
			continue;
		if (!t->collecting && !t->dropped)
			window_closed(tg, i, r, t->last_reply_us);
		else
			run_of(tg, i, r)->state = RUN_DONE;
	}
}

static bool any(const bool *which, int n)
{
	for (int i = 0; i < n; i++)
		if (which[i])
			return true;
	return false;
}

static void send_due(struct triggers *tg)
{
	int n = tg->known;

	/* Targets already collecting (for the console or another rule) need no START. */
	for (int i = 0; i < n; i++) {
		if (tg->want_start[i] && tg->s->targets[i].collecting) {
			tg->want_start[i] = false;
			after_start(tg, i, clock_wall_us());
		} else if (tg->want_start[i])
			make_room(tg, i);
	}
	if (any(tg->want_start, n)) {
		session_command_some(tg->s, PROTO_CMD_START, tg->want_start);
		for (int i = 0; i < n; i++)
			if (tg->want_start[i])
				after_start(tg, i, tg->s->targets[i].last_reply_us);
	}
	if (any(tg->want_stop, n)) {
		session_command_some(tg->s, PROTO_CMD_STOP, tg->want_stop);
		for (int i = 0; i < n; i++)
			if (tg->want_stop[i])
				after_stop(tg, i);
	}
	memset(tg->want_start, 0, SESSION_MAX_TARGETS * sizeof(bool));
	memset(tg->want_stop, 0, SESSION_MAX_TARGETS * sizeof(bool));
}



/* Step every rule on every target and send what is due; true when something was sent. */
bool trigger_evaluate(struct triggers *tg)
{
	bool sent;

	for (int i = 0; i < tg->known; i++)
		for (int r = 0; !tg->gone[i] && r < tg->nrules; r++)
			step_run(tg, i, r);
	sent = any(tg->want_start, tg->known) || any(tg->want_stop, tg->known);
	send_due(tg);
	return sent;
}
