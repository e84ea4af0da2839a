// SPDX-License-Identifier: MIT
/*
 * The trigger engine (see triggers.h): rules' windows per target, their
 * START/STOP fanned out per round, the record of every window, waiters.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "dynprof/fdio.h"
#include "events_out.h"
#include "report.h"
#include "triggers_impl.h"

#define RETRY_FIRST_MS 100  /* NOT_SET_DEVICE: first retry after this */
#define RETRY_MAX_MS 3200   /* ... doubling up to this */
#define RECONNECT_MARGIN 2  /* START + STOP must fit in the connection's requests */
#define TICK_ROUNDS 4       /* evaluations per tick while windows keep changing */

/* ---- setting up ------------------------------------------------------------ */

static int add_probe(struct triggers *tg, const struct condition *c)
{
	char err[512];

	if (trigger_probe_id(tg, c) >= 0)
		return 0;
	if (tg->nprobes == TRIGGER_MAX_PROBES) {
		report_error("dynprof: %s: at most %d different LIB:SYMBOL pairs", c->text, TRIGGER_MAX_PROBES);
		return -1;
	}
	/* A library given by path is checked now, where it is visible from here. */
	if (strchr(c->lib, '/') && access(c->lib, F_OK) == 0 &&
	    callcount_check_file(c->lib, c->symbol, err, sizeof(err))) {
		report_error("dynprof: %s can never fire: %s", c->text, err);
		return -1;
	}
	tg->probes[tg->nprobes++] = (struct probe){ c->lib, c->symbol };
	return 0;
}

int triggers_add_condition(struct triggers *tg, const struct condition *c)
{
	if (c->kind == COND_SIGNAL)
		trigger_inputs_add_signal(&tg->in, c->signo);
	else if (c->kind == COND_FILE && trigger_inputs_add_file(&tg->in, c->path)) {
		report_error("dynprof: %s: at most %d different paths", c->text, TRIGGER_MAX_FILES);
		return -1;
	} else if (c->kind == COND_CALL)
		return add_probe(tg, c);
	return 0;
}

static bool alloc_tables(struct triggers *tg)
{
	size_t n = SESSION_MAX_TARGETS;

	tg->gone = calloc(n, sizeof(*tg->gone));
	tg->exe = calloc(n, sizeof(*tg->exe));
	tg->counts = calloc(n * TRIGGER_MAX_PROBES, sizeof(*tg->counts));
	tg->probe_st = calloc(n * TRIGGER_MAX_PROBES, sizeof(*tg->probe_st));
	tg->runs = calloc(n * (size_t)(tg->nrules ? tg->nrules : 1), sizeof(*tg->runs));
	tg->want_start = calloc(n, sizeof(*tg->want_start));
	tg->want_stop = calloc(n, sizeof(*tg->want_stop));
	return tg->gone && tg->exe && tg->counts && tg->probe_st && tg->runs && tg->want_start &&
	       tg->want_stop;
}

struct triggers *triggers_new(struct session *s, const struct window_rule *rules, int nrules)
{
	struct triggers *tg = calloc(1, sizeof(*tg));

	if (!tg) {
		report_error("dynprof: out of memory");
		return NULL;
	}
	tg->s = s;
	tg->rules = rules;
	tg->nrules = nrules;
	tg->start_ms = clock_ms();
	trigger_inputs_init(&tg->in);
	if (!alloc_tables(tg)) {
		report_error("dynprof: out of memory");
		triggers_close(tg);
		return NULL;
	}
	for (int r = 0; r < nrules; r++)
		if (triggers_add_condition(tg, &rules[r].start) || triggers_add_condition(tg, &rules[r].stop)) {
			triggers_close(tg);
			return NULL;
		}
	return tg;
}

void triggers_close(struct triggers *tg)
{
	if (!tg)
		return;
	callcount_close(tg->cc);
	trigger_inputs_close(&tg->in);
	if (tg->record)
		fclose(tg->record);
	free(tg->gone);
	free(tg->exe);
	free(tg->counts);
	free(tg->probe_st);
	free(tg->runs);
	free(tg->want_start);
	free(tg->want_stop);
	free(tg);
}

bool triggers_have_rules(const struct triggers *tg)
{
	return tg && tg->nrules > 0;
}

bool triggers_need_model(const struct triggers *tg)
{
	for (int r = 0; tg && r < tg->nrules; r++)
		if (tg->rules[r].start.kind == COND_OPEN)
			return true;
	return false;
}

/* ---- targets coming and going ----------------------------------------------- */

static void read_exe(struct triggers *tg, int i)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", tg->s->targets[i].pid);
	n = readlink(link, tg->exe[i], sizeof(tg->exe[i]) - 1);
	tg->exe[i][n > 0 ? n : 0] = '\0';
}

/* Probe every LIB:SYMBOL in target i. -1 when one can never count (printed). */
static int watch_probes(struct triggers *tg, int i)
{
	const struct target *t = &tg->s->targets[i];
	int bad = 0;

	for (int p = 0; p < tg->nprobes; p++) {
		char err[512];
		int rc = callcount_watch(tg->cc, t->pid, (unsigned)p, tg->probes[p].lib, tg->probes[p].symbol,
					 err, sizeof(err));

		tg->probe_st[i * TRIGGER_MAX_PROBES + p] =
			rc == CALLCOUNT_ATTACHED ? PROBE_COUNTING : rc == CALLCOUNT_NOT_MAPPED ? PROBE_PENDING : PROBE_FAILED;
		if (rc == CALLCOUNT_NOT_MAPPED)
			report_info("pid %d: %s not loaded yet: probing %s when it is", t->pid, tg->probes[p].lib,
				    tg->probes[p].symbol);
		else if (rc < 0) {
			report_target_error(t->pid, "dynprof: pid %d: call:%s:%s can never fire: %s", t->pid,
					    tg->probes[p].lib, tg->probes[p].symbol, err);
			bad = -1;
		}
	}
	return bad;
}

static bool run_uses_probe(const struct triggers *tg, int r, int probe)
{
	const struct window_rule *w = &tg->rules[r];

	return (w->start.kind == COND_CALL && trigger_probe_id(tg, &w->start) == probe) ||
	       (w->stop.kind == COND_CALL && trigger_probe_id(tg, &w->stop) == probe);
}

/* A probe that can never count ends the rules that need it on that target. */
static void fail_probe_runs(struct triggers *tg, int i, int probe)
{
	for (int r = 0; r < tg->nrules; r++)
		if (run_uses_probe(tg, r, probe) && run_of(tg, i, r)->state == RUN_ARMED)
			run_of(tg, i, r)->state = RUN_DONE;
}

/* A new target: probes attached, runs armed. -1 when a probe can never count. */
static int take_in(struct triggers *tg, int i)
{
	int rc = 0;

	read_exe(tg, i);
	if (tg->cc)
		rc = watch_probes(tg, i);
	for (int p = 0; p < tg->nprobes; p++)
		if (tg->probe_st[i * TRIGGER_MAX_PROBES + p] == PROBE_FAILED)
			fail_probe_runs(tg, i, p);
	for (int r = 0; r < tg->nrules; r++) {
		struct rule_run *run = run_of(tg, i, r);

		if (run->state == RUN_DONE)
			continue;
		/* The first window's start counts from the run's beginning, and calls from the join. */
		trigger_phase_begin(tg, &tg->rules[r].start, i, 0, &run->phase);
		run->phase.since_ms = tg->start_ms;
		run->phase.sig_base = 0;
		run->phase.file_base = 0;
	}
	return rc;
}

static void record_window(struct triggers *tg, int i, int r, int64_t stop_ack_us);

/* A target left: its open windows ended with it (recorded), its rules are done. */
static void let_go(struct triggers *tg, int i)
{
	tg->gone[i] = true;
	for (int r = 0; r < tg->nrules; r++) {
		struct rule_run *run = run_of(tg, i, r);

		if (run->state == RUN_OPEN || run->state == RUN_STOPPING) {
			run->stop_fired_us = clock_wall_us();
			record_window(tg, i, r, run->stop_fired_us);
		}
		run->state = RUN_DONE;
	}
	if (tg->cc)
		callcount_forget(tg->cc, tg->s->targets[i].pid);
}

static void follow_targets(struct triggers *tg)
{
	while (tg->known < tg->s->ntargets) {
		int i = tg->known++;

		if (tg->s->targets[i].dropped)
			let_go(tg, i);
		else
			take_in(tg, i);
	}
	for (int i = 0; i < tg->known; i++)
		if (!tg->gone[i] && tg->s->targets[i].dropped)
			let_go(tg, i);
}

int triggers_start(struct triggers *tg, struct procmodel *model)
{
	char err[256];
	int rc;

	tg->model = model;
	rc = trigger_inputs_start(&tg->in);
	if (rc) {
		report_error("dynprof: cannot watch signals for --window: %s", strerror(-rc));
		return -1;
	}
	if (tg->nprobes && !(tg->cc = callcount_open(err, sizeof(err)))) {
		report_error("dynprof: call: conditions need BPF uprobes: %s", err);
		return -1;
	}
	while (tg->known < tg->s->ntargets) {
		int i = tg->known++;

		if (tg->s->targets[i].dropped) {
			let_go(tg, i);
			continue;
		}
		if (take_in(tg, i))
			return -1; /* attach mode: refused before any window opens */
	}
	return 0;
}

/* ---- the record of every window -------------------------------------------- */

static void open_record(struct triggers *tg)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%d_dynprof_windows", tg->s->output, (int)getpid());
	tg->record = fopen(path, "ae");
	if (!tg->record)
		report_warning("dynprof: cannot write the window record %s: %s", path, strerror(errno));
}

static void add_edge(cJSON *w, const char *name, const struct condition *c, int64_t fired_us, int64_t ack_us)
{
	cJSON *e = cJSON_AddObjectToObject(w, name);
	char buf[32];

	if (!e)
		return;
	cJSON_AddStringToObject(e, "condition", c->kind == COND_NONE ? "exit or quit" : c->text);
	snprintf(buf, sizeof(buf), "%lld", (long long)fired_us);
	cJSON_AddRawToObject(e, "fired_us", buf);
	snprintf(buf, sizeof(buf), "%lld", (long long)ack_us);
	cJSON_AddRawToObject(e, "ack_us", buf);
}

/* call: starts: the count that fired and the count when the target had acknowledged. */
static void add_counts(cJSON *edge, uint64_t fired, uint64_t acked)
{
	char buf[32];

	if (!edge)
		return;
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)fired);
	cJSON_AddRawToObject(edge, "count", buf);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)acked);
	cJSON_AddRawToObject(edge, "ack_count", buf);
}

/* One JSON line per closed window: which rule, when each edge fired and was acknowledged. */
static void record_window(struct triggers *tg, int i, int r, int64_t stop_ack_us)
{
	const struct rule_run *run = run_of(tg, i, r);
	cJSON *w;
	char *text;

	if (!tg->record)
		open_record(tg);
	if (!tg->record || !(w = cJSON_CreateObject()))
		return;
	cJSON_AddNumberToObject(w, "pid", tg->s->targets[i].pid);
	cJSON_AddNumberToObject(w, "rule", r + 1);
	cJSON_AddNumberToObject(w, "window", run->windows);
	add_edge(w, "start", &tg->rules[r].start, run->start_fired_us, run->start_ack_us);
	if (tg->rules[r].start.kind == COND_CALL)
		add_counts(cJSON_GetObjectItem(w, "start"), run->start_count, run->ack_count);
	add_edge(w, "stop", &tg->rules[r].stop, run->stop_fired_us ? run->stop_fired_us : stop_ack_us,
		 stop_ack_us);
	text = cJSON_PrintUnformatted(w);
	if (text) {
		fprintf(tg->record, "%s\n", text);
		fflush(tg->record);
	}
	free(text);
	cJSON_Delete(w);
}

/* ---- one rule on one target ---------------------------------------------- */

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

	return probe < 0 ? 0 : tg->counts[i * TRIGGER_MAX_PROBES + probe];
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

	record_window(tg, i, r, ack_us);
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

	if (!t->collecting && t->requests + RECONNECT_MARGIN >= PROTO_MAX_REQUESTS_PER_CONN)
		session_reconnect(tg->s, i);
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

static const struct callcount_handlers *handlers(struct triggers *tg);

/* Step every rule on every target and send what is due; true when something was sent. */
static bool evaluate(struct triggers *tg)
{
	bool sent;

	for (int i = 0; i < tg->known; i++)
		for (int r = 0; !tg->gone[i] && r < tg->nrules; r++)
			step_run(tg, i, r);
	sent = any(tg->want_start, tg->known) || any(tg->want_stop, tg->known);
	send_due(tg);
	return sent;
}

void triggers_tick(struct triggers *tg)
{
	trigger_inputs_check_files(&tg->in);
	if (tg->cc && callcount_pending(tg->cc))
		callcount_refresh(tg->cc, handlers(tg));
	follow_targets(tg);
	/* A window that opened or closed may make another condition true at once. */
	for (int round = 0; round < TICK_ROUNDS && evaluate(tg); round++)
		follow_targets(tg);
}

/* ---- call counts from the kernel --------------------------------------------- */

static int index_of(const struct triggers *tg, int pid)
{
	for (int i = 0; i < tg->known; i++)
		if (!tg->gone[i] && tg->s->targets[i].pid == pid)
			return i;
	return -1;
}

static void on_fired(void *ctx, int pid, unsigned probe, uint64_t count, uint64_t ktime_ns)
{
	struct triggers *tg = ctx;
	int i = index_of(tg, pid);
	uint64_t *seen;

	(void)ktime_ns;
	if (i < 0 || probe >= TRIGGER_MAX_PROBES)
		return;
	seen = &tg->counts[i * TRIGGER_MAX_PROBES + probe];
	if (count > *seen)
		*seen = count;
}

/* Thresholds of the conditions waiting on `probe` in target i, armed again. */
static void rearm(struct triggers *tg, int i, int probe)
{
	const struct condition *c;

	for (int r = 0; r < tg->nrules; r++) {
		struct rule_run *run = run_of(tg, i, r);

		c = run->state == RUN_ARMED ? &tg->rules[r].start : run->state == RUN_OPEN ? &tg->rules[r].stop : NULL;
		if (c && c->kind == COND_CALL && trigger_probe_id(tg, c) == probe)
			callcount_arm(tg->cc, tg->s->targets[i].pid, (unsigned)probe, run->phase.call_threshold);
	}
	for (int w = 0; w < TRIGGER_MAX_WAITERS; w++) {
		c = tg->waiters[w].c;
		if (tg->waiters[w].used && c->kind == COND_CALL && trigger_probe_id(tg, c) == probe)
			callcount_arm(tg->cc, tg->s->targets[i].pid, (unsigned)probe, tg->waiters[w].phase.call_threshold);
	}
}

static void on_attached(void *ctx, int pid, unsigned probe, const char *path)
{
	struct triggers *tg = ctx;
	int i = index_of(tg, pid);

	if (i < 0 || probe >= TRIGGER_MAX_PROBES)
		return;
	report_info("pid %d: %s loaded: counting calls of %s", pid, path, tg->probes[probe].symbol);
	tg->probe_st[i * TRIGGER_MAX_PROBES + probe] = PROBE_COUNTING;
	rearm(tg, i, (int)probe);
}

static void on_failed(void *ctx, int pid, unsigned probe, const char *why)
{
	struct triggers *tg = ctx;
	int i = index_of(tg, pid);

	if (i < 0 || probe >= TRIGGER_MAX_PROBES)
		return;
	report_target_error(pid, "dynprof: pid %d: call:%s:%s can never fire: %s", pid, tg->probes[probe].lib,
			    tg->probes[probe].symbol, why);
	tg->probe_st[i * TRIGGER_MAX_PROBES + probe] = PROBE_FAILED;
	fail_probe_runs(tg, i, (int)probe);
}

static const struct callcount_handlers *handlers(struct triggers *tg)
{
	static struct callcount_handlers h = { .fired = on_fired, .attached = on_attached, .failed = on_failed };

	h.ctx = tg;
	return &h;
}

/* ---- the console's side ---------------------------------------------------- */

int triggers_pollfds(const struct triggers *tg, struct pollfd *pfds, int max)
{
	int n = 0;

	if (tg->in.sigfd >= 0 && n < max)
		pfds[n++] = (struct pollfd){ .fd = tg->in.sigfd, .events = POLLIN };
	if (tg->cc && n < max)
		pfds[n++] = (struct pollfd){ .fd = callcount_fd(tg->cc), .events = POLLIN };
	return n;
}

void triggers_event(struct triggers *tg, const struct pollfd *pfd)
{
	if (pfd->fd == tg->in.sigfd)
		trigger_inputs_read_signals(&tg->in);
	else if (tg->cc && pfd->fd == callcount_fd(tg->cc))
		callcount_consume(tg->cc, handlers(tg));
}

static int64_t earlier(int64_t a, int64_t b)
{
	return a < 0 ? b : b < 0 ? a : a < b ? a : b;
}

static int64_t run_due_ms(const struct triggers *tg, int i, int r)
{
	const struct rule_run *run = run_of(tg, i, r);
	const struct window_rule *w = &tg->rules[r];
	int64_t now = clock_ms();

	switch (run->state) {
	case RUN_ARMED:
		if (w->every_ms && run->windows > 0)
			return run->opened_ms + w->every_ms > now ? run->opened_ms + w->every_ms - now : 0;
		return trigger_cond_due_ms(&w->start, &run->phase);
	case RUN_STARTING:
		return run->retry_ms > now ? run->retry_ms - now : 0;
	case RUN_OPEN:
		return trigger_cond_due_ms(&w->stop, &run->phase);
	default:
		return -1;
	}
}

int triggers_timeout_ms(const struct triggers *tg)
{
	int64_t due = trigger_inputs_timeout_ms(&tg->in);

	if (tg->cc && callcount_pending(tg->cc))
		due = earlier(due, CALLCOUNT_REFRESH_MS);
	for (int i = 0; i < tg->known; i++)
		for (int r = 0; !tg->gone[i] && r < tg->nrules; r++)
			due = earlier(due, run_due_ms(tg, i, r));
	for (int w = 0; w < TRIGGER_MAX_WAITERS; w++)
		if (tg->waiters[w].used)
			due = earlier(due, trigger_cond_due_ms(tg->waiters[w].c, &tg->waiters[w].phase));
	return due < 0 ? -1 : due > 60000 ? 60000 : (int)due;
}

void triggers_quitting(struct triggers *tg)
{
	for (int i = 0; i < tg->known; i++)
		for (int r = 0; !tg->gone[i] && r < tg->nrules; r++)
			if (run_of(tg, i, r)->state == RUN_OPEN) {
				run_of(tg, i, r)->stop_fired_us = clock_wall_us();
				record_window(tg, i, r, clock_wall_us());
				run_of(tg, i, r)->state = RUN_DONE;
			}
}

/*
 * Every live target has done every rule. When no target is left the run
 * ends for that reason instead (status 1), not as a success.
 */
bool triggers_exhausted(const struct triggers *tg)
{
	bool live = false;

	for (int i = 0; tg->nrules && i < tg->known; i++)
		for (int r = 0; !tg->gone[i] && r < tg->nrules; r++) {
			live = true;
			if (run_of(tg, i, r)->state != RUN_DONE)
				return false;
		}
	return live;
}

/* ---- waiters ------------------------------------------------------------ */

int triggers_wait_begin(struct triggers *tg, const struct condition *c, char *err, size_t errlen)
{
	for (int w = 0; w < TRIGGER_MAX_WAITERS; w++) {
		if (tg->waiters[w].used)
			continue;
		if (c->kind == COND_CALL && trigger_probe_id(tg, c) < 0) {
			snprintf(err, errlen, "wait %s: the function is not probed (name it in --commands or a --window rule)",
				 c->text);
			return -1;
		}
		if (c->kind == COND_OPEN && !tg->model) {
			snprintf(err, errlen, "wait open: card opens are not watched in this run (name it in --commands or a --window rule)");
			return -1;
		}
		if (c->kind == COND_SIGNAL && !sigismember(&tg->in.sigs, c->signo)) {
			snprintf(err, errlen, "wait %s: the signal is not watched (name it in --commands or a --window rule)",
				 c->text);
			return -1;
		}
		if (c->kind == COND_FILE && trigger_inputs_add_file(&tg->in, c->path)) {
			snprintf(err, errlen, "wait %s: too many paths watched", c->text);
			return -1;
		}
		tg->waiters[w] = (struct waiter){ .used = true, .c = c };
		/* Calls count from each target's join: wait call:...#N means the N-th call. */
		trigger_phase_begin(tg, c, -1, 0, &tg->waiters[w].phase);
		return w;
	}
	snprintf(err, errlen, "more than %d waits at once", TRIGGER_MAX_WAITERS);
	return -1;
}

bool triggers_wait_met(struct triggers *tg, int id)
{
	const struct waiter *w = &tg->waiters[id];

	/* A file already there satisfies a wait: the script waits for it to exist. */
	if (w->c->kind == COND_FILE && trigger_inputs_file_present(&tg->in, w->c->path))
		return true;
	return trigger_cond_met(tg, w->c, -1, &w->phase);
}

void triggers_wait_end(struct triggers *tg, int id)
{
	tg->waiters[id].used = false;
}
