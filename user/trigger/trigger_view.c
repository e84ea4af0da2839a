// SPDX-License-Identifier: MIT
/* The engine seen from outside, read only (see trigger_view.h). */
#include "trigger/trigger_view.h"
#include "trigger/triggers_impl.h"

int triggers_rule_count(const struct triggers *tg)
{
	return tg ? tg->nrules : 0;
}

const struct window_rule *triggers_rule(const struct triggers *tg, int r)
{
	return tg && r >= 0 && r < tg->nrules ? &tg->rules[r] : NULL;
}

const char *triggers_rule_text(const struct triggers *tg, int r)
{
	const struct window_rule *rule = triggers_rule(tg, r);

	return rule ? rule->text : NULL;
}

static const char *state_name(enum run_state st)
{
	switch (st) {
	case RUN_ARMED:
		return "armed";
	case RUN_FIRED:
	case RUN_STARTING:
		return "starting";
	case RUN_OPEN:
		return "open";
	case RUN_STOPPING:
		return "stopping";
	case RUN_DONE:
		break;
	}
	return "done";
}

bool triggers_rule_view(const struct triggers *tg, int index, int r, struct trigger_rule_view *out)
{
	const struct rule_run *run;

	if (!tg || r < 0 || r >= tg->nrules || index < 0 || index >= tg->known || tg->gone[index] ||
	    tg->serial[index] != session_target_serial(tg->s, index))
		return false;
	run = run_of(tg, index, r);
	out->text = tg->rules[r].text;
	out->state = state_name(run->state);
	out->windows = run->windows;
	return true;
}
