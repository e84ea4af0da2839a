// SPDX-License-Identifier: MIT
/*
 * Rules added while the engine runs (`window RULE`, see triggers.h): what
 * the rule needs registered live, the per-rule arrays widened, and the
 * rule armed in every present target from now. Later joiners take it in
 * as any --window rule (trigger_runs_take_in, from the rule's origin).
 */
#include <stdlib.h>
#include <string.h>

#include "common/errbuf.h"
#include "report/report.h"
#include "shared/clock.h"
#include "trigger/trigger_calls.h"
#include "trigger/trigger_inputs.h"
#include "trigger/triggers_impl.h"

#define TRIGGER_MAX_RULES 64 /* --window rules and added ones together */

bool trigger_rules_grow(struct triggers *tg)
{
	int room = tg->rules_room ? tg->rules_room * 2 : 8;
	struct window_rule *rules;
	struct phase *origin;

	if (tg->nrules < tg->rules_room)
		return true;
	rules = realloc(tg->rules, (size_t)room * sizeof(*rules));
	if (!rules)
		return false;
	tg->rules = rules;
	origin = realloc(tg->origin, (size_t)room * sizeof(*origin));
	if (!origin)
		return false;
	tg->origin = origin;
	tg->rules_room = room;
	return true;
}

/* What one condition needs, registered now. 0, or -1 with err. */
static int register_live(struct triggers *tg, const struct condition *c, char *err, size_t errlen)
{
	int rc;

	switch (c->kind) {
	case COND_OPEN:
		if (!tg->model)
			return errbuf_set(err, errlen,
					  "start=open: card opens are not watched in this run (give such a rule with --window when dynprof starts)");
		return 0;
	case COND_CALL:
		return trigger_calls_add_live(tg, c, err, errlen);
	case COND_FILE:
		if (trigger_inputs_add_file(tg->in, c->path))
			return errbuf_set(err, errlen, "%s: at most %d different paths", c->text,
					  TRIGGER_MAX_FILES);
		return 0;
	case COND_SIGNAL:
		rc = trigger_inputs_add_signal_live(tg->in, c->signo);
		return rc ? errbuf_set(err, errlen, "%s: cannot watch the signal: %s", c->text,
				       strerror(-rc)) :
			    0;
	default:
		return 0;
	}
}

/*
 * Where the rule's first start counts from, for every target: now. A file
 * already there counts as having appeared, as one there when the run began.
 */
static struct phase origin_now(const struct triggers *tg, const struct condition *start)
{
	struct phase o = { .since_ms = clock_ms() };

	if (start->kind == COND_SIGNAL)
		o.sig_base = trigger_inputs_sig_count(tg->in, start->signo);
	else if (start->kind == COND_FILE)
		o.file_base = trigger_inputs_file_count(tg->in, start->path) -
			      trigger_inputs_file_present(tg->in, start->path);
	return o;
}

/* Rule r in present target i: armed, its calls counted from the count now. */
static void arm_now(struct triggers *tg, int i, int r)
{
	struct rule_run *run = run_of(tg, i, r);
	const struct condition *start = &tg->rules[r].start;
	int probe = start->kind == COND_CALL ? trigger_calls_probe_id(tg->calls, start) : -1;
	uint64_t base = probe >= 0 ? trigger_calls_now(tg, i, probe) : 0;

	if (trigger_phase_begin(tg, start, i, base, &run->phase))
		run_failed(run); /* printed: the threshold cannot be armed there */
	run->phase.since_ms = tg->origin[r].since_ms;
	run->phase.sig_base = tg->origin[r].sig_base;
	run->phase.file_base = tg->origin[r].file_base;
}

int triggers_add_rule(struct triggers *tg, struct window_rule *r, char *err, size_t errlen)
{
	int n = tg ? tg->nrules : 0;

	if (!tg)
		return errbuf_set(err, errlen, "rules cannot be added in this run");
	if (n >= TRIGGER_MAX_RULES)
		return errbuf_set(err, errlen, "at most %d rules", TRIGGER_MAX_RULES);
	if (register_live(tg, &r->start, err, errlen) || register_live(tg, &r->stop, err, errlen))
		return -1;
	/* The runs table is laid out by nrules: widened and the count raised together. */
	if (!trigger_rules_grow(tg) || runs_widen(&tg->runs, tg->room, n))
		return errbuf_set(err, errlen, "out of memory");
	tg->rules[n] = *r;
	memset(r, 0, sizeof(*r));
	tg->origin[n] = origin_now(tg, &tg->rules[n].start);
	tg->nrules = n + 1;
	for (int i = 0; i < tg->known; i++) {
		if (tg->gone[i])
			continue;
		arm_now(tg, i, n);
		trigger_calls_fail_runs(tg, i);
	}
	report_info("rule %d added: %s", n + 1, tg->rules[n].text);
	return n + 1;
}
