// SPDX-License-Identifier: MIT
/*
 * The trigger engine's side of call counting (callcount.h): probes attached
 * as targets join, thresholds armed again when a library appears, counts
 * taken in as the kernel reports them.
 */
#include "out/report.h"
#include "trigger/triggers_impl.h"

/* Probe every LIB:SYMBOL in target i. -1 when one can never count (printed). */
int trigger_watch_probes(struct triggers *tg, int i)
{
	const struct target *t = &tg->s->targets[i];
	int bad = 0;

	for (int p = 0; p < tg->nprobes; p++) {
		char err[512];
		int rc = callcount_watch(tg->cc, t->pid, (unsigned)p, tg->probes[p].lib, tg->probes[p].symbol,
					 err, sizeof(err));

		*probe_state_of(tg, i, p) =
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
void trigger_fail_probe_runs(struct triggers *tg, int i, int probe)
{
	for (int r = 0; r < tg->nrules; r++)
		if (run_uses_probe(tg, r, probe) && run_of(tg, i, r)->state == RUN_ARMED)
			run_of(tg, i, r)->state = RUN_DONE;
}


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
	seen = count_of(tg, i, (int)probe);
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
	*probe_state_of(tg, i, (int)probe) = PROBE_COUNTING;
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
	*probe_state_of(tg, i, (int)probe) = PROBE_FAILED;
	trigger_fail_probe_runs(tg, i, (int)probe);
}

const struct callcount_handlers *trigger_call_handlers(struct triggers *tg)
{
	static struct callcount_handlers h = { .fired = on_fired, .attached = on_attached, .failed = on_failed };

	h.ctx = tg;
	return &h;
}

