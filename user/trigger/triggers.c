// SPDX-License-Identifier: MIT
/*
 * The trigger engine (see triggers.h): set-up, targets coming and going,
 * and the console's side (fds, timeouts, ticks). The rules' state machines
 * are in trigger_runs.c, conditions in trigger_cond.c, call counts in
 * trigger_calls.c, the window record in trigger_record.c, script waits in
 * trigger_waiters.c.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared/fdio.h"
#include "proc/procscan.h"
#include "out/report.h"
#include "trigger/triggers_impl.h"

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


/* A new target: probes attached, runs armed. -1 when a probe can never count. */
static int take_in(struct triggers *tg, int i)
{
	int rc = 0;

	if (procscan_exe(tg->s->targets[i].pid, tg->exe[i], sizeof(tg->exe[i]))) {
		/* exec: conditions match it; unreadable leaves "" (never matches). */
	}
	if (tg->cc)
		rc = trigger_watch_probes(tg, i);
	for (int p = 0; p < tg->nprobes; p++)
		if (*probe_state_of(tg, i, p) == PROBE_FAILED)
			trigger_fail_probe_runs(tg, i, p);
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

/* A target left: its open windows ended with it (recorded), its rules are done. */
static void let_go(struct triggers *tg, int i)
{
	tg->gone[i] = true;
	for (int r = 0; r < tg->nrules; r++) {
		struct rule_run *run = run_of(tg, i, r);

		if (run->state == RUN_OPEN || run->state == RUN_STOPPING) {
			run->stop_fired_us = clock_wall_us();
			trigger_record_window(tg, i, r, run->stop_fired_us);
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

void triggers_tick(struct triggers *tg)
{
	trigger_inputs_check_files(&tg->in);
	if (tg->cc && callcount_pending(tg->cc))
		callcount_refresh(tg->cc, trigger_call_handlers(tg));
	follow_targets(tg);
	/* A window that opened or closed may make another condition true at once. */
	for (int round = 0; round < TICK_ROUNDS && trigger_evaluate(tg); round++)
		follow_targets(tg);
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
		callcount_consume(tg->cc, trigger_call_handlers(tg));
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
				trigger_record_window(tg, i, r, clock_wall_us());
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

