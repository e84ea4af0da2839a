// SPDX-License-Identifier: MIT
/*
 * The trigger engine's side of call counting (see trigger_calls.h): probes
 * attached as targets join, thresholds armed again when a library appears,
 * counts taken in as the kernel reports them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/errbuf.h"
#include "dynprof/callcount.h"
#include "kernel/callcount.h"
#include "report/report.h"
#include "shared/clock.h"
#include "trigger/trigger_calls.h"
#include "trigger/triggers_impl.h"

enum probe_state { PROBE_NONE, PROBE_PENDING, PROBE_COUNTING, PROBE_FAILED };

/* One LIB:SYMBOL with one way of probing it: counted, or timed with one limit. */
struct probe {
	const char *lib, *symbol;
	char text[300]; /* call:LIB:SYMBOL, or the first timed condition that named it: for messages */
	struct callcount_timing t;
};

struct trigger_calls {
	struct callcount *cc; /* NULL until started, or with no probe */
	struct probe probes[TRIGGER_MAX_PROBES];
	int nprobes;
	uint64_t (*counts)[TRIGGER_MAX_PROBES];                 /* [target]: last count seen */
	struct trigger_measure (*measures)[TRIGGER_MAX_PROBES]; /* [target]: what the last record said */
	unsigned char (*state)[TRIGGER_MAX_PROBES];             /* [target]: enum probe_state */
	trigger_rearm_fn rearm_more; /* the waiters' thresholds (a layer above) */
};

struct trigger_calls *trigger_calls_new(trigger_rearm_fn rearm_more)
{
	struct trigger_calls *calls = calloc(1, sizeof(struct trigger_calls));

	if (calls)
		calls->rearm_more = rearm_more;
	return calls;
}

void trigger_calls_close(struct trigger_calls *calls)
{
	if (!calls)
		return;
	callcount_close(calls->cc);
	free(calls->counts);
	free(calls->measures);
	free(calls->state);
	free(calls);
}

int trigger_calls_grow(struct trigger_calls *calls, int old, int ntargets)
{
	uint64_t(*counts)[TRIGGER_MAX_PROBES] =
		realloc(calls->counts, (size_t)ntargets * sizeof(*counts));
	unsigned char(*state)[TRIGGER_MAX_PROBES];
	struct trigger_measure(*measures)[TRIGGER_MAX_PROBES];

	if (!counts)
		return -ENOMEM;
	calls->counts = counts;
	measures = realloc(calls->measures, (size_t)ntargets * sizeof(*measures));
	if (!measures)
		return -ENOMEM;
	calls->measures = measures;
	state = realloc(calls->state, (size_t)ntargets * sizeof(*state));
	if (!state)
		return -ENOMEM; /* counts is larger, which is harmless */
	calls->state = state;
	for (int i = old; i < ntargets; i++)
		trigger_calls_reset(calls, i);
	return 0;
}

void trigger_calls_reset(struct trigger_calls *calls, int i)
{
	memset(calls->counts[i], 0, sizeof(calls->counts[i]));
	memset(calls->measures[i], 0, sizeof(calls->measures[i]));
	memset(calls->state[i], 0, sizeof(calls->state[i]));
}

/* How a condition probes its function. */
static struct callcount_timing timing_of(const struct condition *c)
{
	switch (c->kind) {
	case COND_SLOW:
		return (struct callcount_timing){ DP_TM_SLOW, c->limit_ns, c->mult_milli };
	case COND_GAP:
		return (struct callcount_timing){ DP_TM_GAP, c->limit_ns, c->mult_milli };
	case COND_STALL:
		return (struct callcount_timing){ .kind = DP_TM_STALL };
	default:
		return (struct callcount_timing){ 0 };
	}
}

static bool same_timing(const struct callcount_timing *a, const struct callcount_timing *b)
{
	return a->kind == b->kind && a->limit_ns == b->limit_ns && a->mult_milli == b->mult_milli;
}

int trigger_calls_probe_id(const struct trigger_calls *calls, const struct condition *c)
{
	struct callcount_timing t;

	if (!cond_probes(c->kind))
		return -1;
	t = timing_of(c);
	for (int i = 0; i < calls->nprobes; i++)
		if (!strcmp(calls->probes[i].lib, c->lib) &&
		    !strcmp(calls->probes[i].symbol, c->symbol) && same_timing(&calls->probes[i].t, &t))
			return i;
	return -1;
}

/* Register c's probe: its id, or -1 with the reason in err. */
static int probe_register(struct trigger_calls *calls, const struct condition *c, char *err, size_t errlen)
{
	char why[512];
	int id = trigger_calls_probe_id(calls, c);

	if (id >= 0)
		return id;
	if (calls->nprobes == TRIGGER_MAX_PROBES)
		return errbuf_set(err, errlen,
				  "%s: at most %d different probes (LIB:SYMBOL pairs, each way of timing one apart)",
				  c->text, TRIGGER_MAX_PROBES);
	/* A library given by path is checked now, where it is visible from here. */
	if (strchr(c->lib, '/') && access(c->lib, F_OK) == 0 &&
	    callcount_check_file(c->lib, c->symbol, why, sizeof(why)))
		return errbuf_set(err, errlen, "%s can never fire: %s", c->text, why);
	calls->probes[calls->nprobes] = (struct probe){ c->lib, c->symbol, "", timing_of(c) };
	if (c->kind == COND_CALL)
		snprintf(calls->probes[calls->nprobes].text, sizeof(calls->probes[0].text),
			 "call:%s:%s", c->lib, c->symbol);
	else
		snprintf(calls->probes[calls->nprobes].text, sizeof(calls->probes[0].text), "%s",
			 c->text);
	return calls->nprobes++;
}

int trigger_calls_add(struct trigger_calls *calls, const struct condition *c)
{
	char err[700];

	if (probe_register(calls, c, err, sizeof(err)) < 0) {
		report_error("dynprof: %s", err);
		return -1;
	}
	return 0;
}

int trigger_calls_start(struct trigger_calls *calls)
{
	char err[256];

	if (calls->nprobes && !(calls->cc = callcount_open(err, sizeof(err)))) {
		report_error("dynprof: call:, slow:, gap: and stall: conditions need BPF uprobes: %s",
			     err);
		return -1;
	}
	return 0;
}

static bool run_uses_probe(const struct triggers *tg, int r, int probe)
{
	const struct window_rule *w = &tg->rules[r];

	return trigger_calls_probe_id(tg->calls, &w->start) == probe ||
	       trigger_calls_probe_id(tg->calls, &w->stop) == probe;
}

/* A probe that can never count ends the rules that wait to start on it in that target. */
static void fail_probe_runs(struct triggers *tg, int i, int probe)
{
	for (int r = 0; r < tg->nrules; r++)
		if (run_uses_probe(tg, r, probe) && run_of(tg, i, r)->state == RUN_ARMED)
			run_failed(run_of(tg, i, r));
}

/* Probe one LIB:SYMBOL in target i. -1 when it can never count there (printed). */
static int watch_probe(struct triggers *tg, int i, int p)
{
	struct trigger_calls *calls = tg->calls;
	int pid = target_pid(tg, i);
	char err[512];
	int rc = callcount_watch_timed(calls->cc, pid, (unsigned)p, calls->probes[p].lib,
				       calls->probes[p].symbol, &calls->probes[p].t, err, sizeof(err));

	calls->state[i][p] = rc == CALLCOUNT_ATTACHED   ? PROBE_COUNTING :
			     rc == CALLCOUNT_NOT_MAPPED ? PROBE_PENDING :
							  PROBE_FAILED;
	if (rc == CALLCOUNT_NOT_MAPPED)
		report_info("pid %d: %s not loaded yet: probing %s when it is", pid,
			    calls->probes[p].lib, calls->probes[p].symbol);
	else if (rc < 0) {
		report_target_error(pid, "dynprof: pid %d: %s can never fire: %s", pid,
				    calls->probes[p].text, callcount_err_text(err, pid));
		return -1;
	}
	return 0;
}

/* Probe every LIB:SYMBOL in target i. -1 when one can never count (printed). */
static int watch_probes(struct triggers *tg, int i)
{
	int bad = 0;

	for (int p = 0; p < tg->calls->nprobes; p++)
		bad |= watch_probe(tg, i, p);
	return bad;
}

int trigger_calls_add_live(struct triggers *tg, const struct condition *c, char *err, size_t errlen)
{
	struct trigger_calls *calls = tg->calls;
	int known = calls->nprobes, p = probe_register(calls, c, err, errlen);
	char why[256];

	if (p < 0 || p < known)
		return p < 0 ? -1 : 0;
	/* The kernel side is loaded at the first call: condition, not before. */
	if (!calls->cc && !(calls->cc = callcount_open(why, sizeof(why)))) {
		calls->nprobes--;
		return errbuf_set(err, errlen,
				  "call:, slow:, gap: and stall: conditions need BPF uprobes: %s", why);
	}
	for (int i = 0; i < tg->known; i++)
		if (!tg->gone[i] && watch_probe(tg, i, p)) {
			/* Printed; the rule's runs there fail (trigger_calls_fail_runs). */
		}
	return 0;
}

void trigger_calls_fail_runs(struct triggers *tg, int i)
{
	for (int p = 0; p < tg->calls->nprobes; p++)
		if (tg->calls->state[i][p] == PROBE_FAILED)
			fail_probe_runs(tg, i, p);
}

int trigger_calls_take_in(struct triggers *tg, int i)
{
	int rc = tg->calls->cc ? watch_probes(tg, i) : 0;

	for (int p = 0; p < tg->calls->nprobes; p++)
		if (tg->calls->state[i][p] == PROBE_FAILED)
			fail_probe_runs(tg, i, p);
	return rc;
}

void trigger_calls_forget(struct triggers *tg, int i)
{
	if (tg->calls->cc)
		callcount_forget(tg->calls->cc, target_pid(tg, i));
}

uint64_t trigger_calls_seen(const struct triggers *tg, int i, int probe)
{
	return tg->calls->counts[i][probe];
}

uint64_t trigger_calls_now(const struct triggers *tg, int i, int probe)
{
	return callcount_read(tg->calls->cc, target_pid(tg, i), (unsigned)probe);
}

/* Arm one threshold in target i; an error is printed (it would never fire there). */
static int arm_one(struct triggers *tg, int i, int probe, uint64_t threshold)
{
	struct trigger_calls *calls = tg->calls;
	int pid = target_pid(tg, i);
	int rc = callcount_arm(calls->cc, pid, (unsigned)probe, threshold);

	if (rc)
		report_target_error(pid, "dynprof: pid %d: %s: cannot wait for event %llu: %s%s",
				    pid, calls->probes[probe].text, (unsigned long long)threshold,
				    strerror(-rc),
				    rc == -ENOSPC ? " (too many thresholds waiting)" : "");
	return rc;
}

/*
 * A threshold already passed fires only at the next call, which may never
 * come (the function's last calls ran before this), so the count is also
 * read now: the condition is then met at once.
 */
int trigger_calls_arm(struct triggers *tg, int target, int probe, uint64_t threshold)
{
	struct trigger_calls *calls = tg->calls;
	int first = 0;

	for (int i = target < 0 ? 0 : target; i < tg->known; i++) {
		if (!tg->gone[i] && calls->state[i][probe] == PROBE_COUNTING) {
			int rc = arm_one(tg, i, probe, threshold);
			uint64_t now = callcount_read(calls->cc, target_pid(tg, i), (unsigned)probe);

			first = first ? first : rc;
			if (now > calls->counts[i][probe])
				calls->counts[i][probe] = now;
		}
		if (target >= 0)
			break;
	}
	return first;
}

/* trigger_waiters.c: a wait's threshold armed again in one target. */
int trigger_calls_arm_one(struct triggers *tg, int i, int probe, uint64_t threshold)
{
	return arm_one(tg, i, probe, threshold);
}

static int index_of(const struct triggers *tg, int pid)
{
	for (int i = 0; i < tg->known; i++)
		if (!tg->gone[i] && target_pid(tg, i) == pid)
			return i;
	return -1;
}

static void on_fired(void *ctx, int pid, unsigned probe, const struct callcount_fire *f)
{
	struct triggers *tg = ctx;
	int i = index_of(tg, pid);

	if (i < 0 || probe >= TRIGGER_MAX_PROBES)
		return;
	if (f->count > tg->calls->counts[i][probe]) {
		tg->calls->counts[i][probe] = f->count;
		tg->calls->measures[i][probe] = (struct trigger_measure){ f->value_ns, f->typical_ns };
	}
}

struct trigger_measure trigger_calls_measure(const struct triggers *tg, int i, int probe)
{
	return tg->calls->measures[i][probe];
}

bool trigger_calls_stalled(const struct triggers *tg, int i, int probe, int64_t since_ms,
			   struct trigger_measure *m)
{
	struct callcount_typical ty;
	uint64_t now = clock_mono_ns(), from = (uint64_t)since_ms * 1000000ULL;

	if (tg->calls->state[i][probe] != PROBE_COUNTING ||
	    callcount_timing_read(tg->calls->cc, target_pid(tg, i), (unsigned)probe, &ty) || !ty.last_ns)
		return false; /* not probed there, or no call yet: nothing has stopped */
	if (ty.last_ns > from)
		from = ty.last_ns;
	*m = (struct trigger_measure){ now > from ? now - from : 0, ty.typical_ns };
	return true;
}

/* Thresholds of the conditions waiting on `probe` in target i, armed again. */
static void rearm(struct triggers *tg, int i, int probe)
{
	for (int r = 0; r < tg->nrules; r++) {
		const struct rule_run *run = run_of(tg, i, r);
		const struct condition *c = run->state == RUN_ARMED ? &tg->rules[r].start :
					    run->state == RUN_OPEN  ? &tg->rules[r].stop :
								      NULL;

		if (c && cond_counted(c->kind) && trigger_calls_probe_id(tg->calls, c) == probe &&
		    arm_one(tg, i, probe, run->phase.call_threshold))
			run_failed(run_of(tg, i, r));
	}
	if (tg->calls->rearm_more)
		tg->calls->rearm_more(tg, i, probe);
}

static void on_attached(void *ctx, int pid, unsigned probe, const char *path)
{
	struct triggers *tg = ctx;
	int i = index_of(tg, pid);

	if (i < 0 || probe >= TRIGGER_MAX_PROBES)
		return;
	report_info("pid %d: %s loaded: %s calls of %s", pid, path,
		    tg->calls->probes[probe].t.kind ? "timing" : "counting",
		    tg->calls->probes[probe].symbol);
	tg->calls->state[i][probe] = PROBE_COUNTING;
	rearm(tg, i, (int)probe);
}

static void on_failed(void *ctx, int pid, unsigned probe, const char *why)
{
	struct triggers *tg = ctx;
	int i = index_of(tg, pid);

	if (i < 0 || probe >= TRIGGER_MAX_PROBES)
		return;
	report_target_error(pid, "dynprof: pid %d: %s can never fire: %s", pid,
			    tg->calls->probes[probe].text, callcount_err_text(why, pid));
	tg->calls->state[i][probe] = PROBE_FAILED;
	fail_probe_runs(tg, i, (int)probe);
}

static const struct callcount_handlers *handlers(struct triggers *tg)
{
	static struct callcount_handlers h = { .fired = on_fired,
					       .attached = on_attached,
					       .failed = on_failed };

	h.ctx = tg;
	return &h;
}

int trigger_calls_pollfds(const struct trigger_calls *calls, struct pollfd *pfds, int max)
{
	if (!calls->cc || max < 1)
		return 0;
	pfds[0] = (struct pollfd){ .fd = callcount_fd(calls->cc), .events = POLLIN };
	return 1;
}

bool trigger_calls_event(struct triggers *tg, const struct pollfd *pfd)
{
	if (!tg->calls->cc || pfd->fd != callcount_fd(tg->calls->cc))
		return false;
	callcount_consume(tg->calls->cc, handlers(tg));
	return true;
}

bool trigger_calls_pending(const struct trigger_calls *calls)
{
	return calls->cc && callcount_pending(calls->cc);
}

void trigger_calls_refresh(struct triggers *tg)
{
	if (trigger_calls_pending(tg->calls))
		callcount_refresh(tg->calls->cc, handlers(tg));
}
