// SPDX-License-Identifier: MIT
/*
 * The trigger engine's side of call counting (see trigger_calls.h): probes
 * attached as targets join, thresholds armed again when a library appears,
 * counts taken in as the kernel reports them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/errbuf.h"
#include "kernel/callcount.h"
#include "out/report.h"
#include "trigger/trigger_calls.h"
#include "trigger/triggers_impl.h"

enum probe_state { PROBE_NONE, PROBE_PENDING, PROBE_COUNTING, PROBE_FAILED };

struct probe {
	const char *lib, *symbol;
};

struct trigger_calls {
	struct callcount *cc;     /* NULL until started, or with no probe */
	struct probe probes[TRIGGER_MAX_PROBES];
	int nprobes;
	uint64_t (*counts)[TRIGGER_MAX_PROBES];      /* [target]: last count seen */
	unsigned char (*state)[TRIGGER_MAX_PROBES]; /* [target]: enum probe_state */
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
	free(calls->state);
	free(calls);
}

int trigger_calls_grow(struct trigger_calls *calls, int old, int ntargets)
{
	uint64_t (*counts)[TRIGGER_MAX_PROBES] = realloc(calls->counts, (size_t)ntargets * sizeof(*counts));
	unsigned char (*state)[TRIGGER_MAX_PROBES];

	if (!counts)
		return -ENOMEM;
	calls->counts = counts;
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
	memset(calls->state[i], 0, sizeof(calls->state[i]));
}

int trigger_calls_probe_id(const struct trigger_calls *calls, const struct condition *c)
{
	for (int i = 0; i < calls->nprobes; i++)
		if (!strcmp(calls->probes[i].lib, c->lib) && !strcmp(calls->probes[i].symbol, c->symbol))
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
		return errbuf_set(err, errlen, "%s: at most %d different LIB:SYMBOL pairs", c->text, TRIGGER_MAX_PROBES);
	/* A library given by path is checked now, where it is visible from here. */
	if (strchr(c->lib, '/') && access(c->lib, F_OK) == 0 &&
	    callcount_check_file(c->lib, c->symbol, why, sizeof(why)))
		return errbuf_set(err, errlen, "%s can never fire: %s", c->text, why);
	calls->probes[calls->nprobes] = (struct probe){ c->lib, c->symbol };
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
		report_error("dynprof: call: conditions need BPF uprobes: %s", err);
		return -1;
	}
	return 0;
}

static bool run_uses_probe(const struct triggers *tg, int r, int probe)
{
	const struct window_rule *w = &tg->rules[r];

	return (w->start.kind == COND_CALL && trigger_calls_probe_id(tg->calls, &w->start) == probe) ||
	       (w->stop.kind == COND_CALL && trigger_calls_probe_id(tg->calls, &w->stop) == probe);
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
	int rc = callcount_watch(calls->cc, pid, (unsigned)p, calls->probes[p].lib, calls->probes[p].symbol, err,
				 sizeof(err));

	calls->state[i][p] =
		rc == CALLCOUNT_ATTACHED ? PROBE_COUNTING : rc == CALLCOUNT_NOT_MAPPED ? PROBE_PENDING : PROBE_FAILED;
	if (rc == CALLCOUNT_NOT_MAPPED)
		report_info("pid %d: %s not loaded yet: probing %s when it is", pid, calls->probes[p].lib,
			    calls->probes[p].symbol);
	else if (rc < 0) {
		report_target_error(pid, "dynprof: pid %d: call:%s:%s can never fire: %s", pid, calls->probes[p].lib,
				    calls->probes[p].symbol, callcount_err_text(err, pid));
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
		return errbuf_set(err, errlen, "call: conditions need BPF uprobes: %s", why);
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
		report_target_error(pid, "dynprof: pid %d: call:%s:%s: cannot wait for call %llu: %s%s", pid,
				    calls->probes[probe].lib, calls->probes[probe].symbol,
				    (unsigned long long)threshold, strerror(-rc),
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

static void on_fired(void *ctx, int pid, unsigned probe, uint64_t count, uint64_t ktime_ns)
{
	struct triggers *tg = ctx;
	int i = index_of(tg, pid);

	(void)ktime_ns;
	if (i < 0 || probe >= TRIGGER_MAX_PROBES)
		return;
	if (count > tg->calls->counts[i][probe])
		tg->calls->counts[i][probe] = count;
}

/* Thresholds of the conditions waiting on `probe` in target i, armed again. */
static void rearm(struct triggers *tg, int i, int probe)
{
	for (int r = 0; r < tg->nrules; r++) {
		const struct rule_run *run = run_of(tg, i, r);
		const struct condition *c = run->state == RUN_ARMED ? &tg->rules[r].start :
					    run->state == RUN_OPEN ? &tg->rules[r].stop : NULL;

		if (c && c->kind == COND_CALL && trigger_calls_probe_id(tg->calls, c) == probe &&
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
	report_info("pid %d: %s loaded: counting calls of %s", pid, path, tg->calls->probes[probe].symbol);
	tg->calls->state[i][probe] = PROBE_COUNTING;
	rearm(tg, i, (int)probe);
}

static void on_failed(void *ctx, int pid, unsigned probe, const char *why)
{
	struct triggers *tg = ctx;
	int i = index_of(tg, pid);

	if (i < 0 || probe >= TRIGGER_MAX_PROBES)
		return;
	report_target_error(pid, "dynprof: pid %d: call:%s:%s can never fire: %s", pid, tg->calls->probes[probe].lib,
			    tg->calls->probes[probe].symbol, callcount_err_text(why, pid));
	tg->calls->state[i][probe] = PROBE_FAILED;
	fail_probe_runs(tg, i, (int)probe);
}

static const struct callcount_handlers *handlers(struct triggers *tg)
{
	static struct callcount_handlers h = { .fired = on_fired, .attached = on_attached, .failed = on_failed };

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
