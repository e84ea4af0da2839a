// SPDX-License-Identifier: MIT
/*
 * When a condition is met: each kind measured from the phase it began
 * (see trigger_cond.h), so one condition serves a first window, a
 * repeated one, a stop and a script's wait alike.
 */
#include <fnmatch.h>
#include <string.h>

#include "model/procmodel.h"
#include "shared/clock.h"
#include "trigger/trigger_calls.h"
#include "trigger/trigger_cond.h"
#include "trigger/trigger_inputs.h"
#include "trigger/triggers_impl.h"

int trigger_phase_begin(struct triggers *tg, const struct condition *c, int target,
			uint64_t call_base, struct phase *ph)
{
	*ph = (struct phase){ .since_ms = clock_ms() };
	if (c->kind == COND_SIGNAL)
		ph->sig_base = trigger_inputs_sig_count(tg->in, c->signo);
	else if (c->kind == COND_FILE)
		ph->file_base = trigger_inputs_file_count(tg->in, c->path);
	else if (cond_counted(c->kind)) {
		int probe = trigger_calls_probe_id(tg->calls, c);

		/* slow:, gap: the next call past the limit. */
		ph->call_threshold = call_base + (c->kind == COND_CALL ? c->count : 1);
		if (probe >= 0)
			return trigger_calls_arm(tg, target, probe, ph->call_threshold);
	}
	return 0;
}

static bool exe_matches(const struct triggers *tg, const char *glob, int target)
{
	const char *exe = tg->exe[target], *base = strrchr(exe, '/');

	return exe[0] && (!fnmatch(glob, exe, 0) || !fnmatch(glob, base ? base + 1 : exe, 0));
}

static bool has_card(const struct triggers *tg, int target)
{
	const struct pm_proc *p = tg->model ? procmodel_get(tg->model, target_pid(tg, target)) : NULL;

	return p && p->cards;
}

/* A condition about one target; target -1: any live target meets it. */
static bool target_cond_met(const struct triggers *tg, const struct condition *c, int target,
			    const struct phase *ph)
{
	int probe = trigger_calls_probe_id(tg->calls, c);
	struct trigger_measure m;

	for (int i = target < 0 ? 0 : target; i < tg->known; i++) {
		if (tg->gone[i])
			goto next;
		if (c->kind == COND_OPEN && has_card(tg, i))
			return true;
		if (c->kind == COND_EXEC && exe_matches(tg, c->glob, i))
			return true;
		if (cond_counted(c->kind) && probe >= 0 &&
		    trigger_calls_seen(tg, i, probe) >= ph->call_threshold)
			return true;
		if (c->kind == COND_STALL && probe >= 0 &&
		    trigger_calls_stalled(tg, i, probe, ph->since_ms, &m) && m.value_ns >= c->limit_ns)
			return true;
next:
		if (target >= 0)
			break;
	}
	return false;
}

bool trigger_cond_met(const struct triggers *tg, const struct condition *c, int target,
		      const struct phase *ph)
{
	switch (c->kind) {
	case COND_AFTER:
	case COND_AT:
		return trigger_cond_due_ms(c, ph) == 0;
	case COND_SIGNAL:
		return trigger_inputs_sig_count(tg->in, c->signo) > ph->sig_base;
	case COND_FILE:
		return trigger_inputs_file_count(tg->in, c->path) > ph->file_base;
	case COND_EXIT: /* a target's exit ends its runs; for a waiter: none left */
		return target < 0 && tg->known > 0 && session_live(tg->s) == 0;
	case COND_OPEN:
	case COND_EXEC:
	case COND_CALL:
	case COND_SLOW:
	case COND_GAP:
	case COND_STALL:
		return target_cond_met(tg, c, target, ph);
	default:
		return false;
	}
}

int64_t trigger_cond_due_ms(const struct condition *c, const struct phase *ph)
{
	int64_t left;

	if (c->kind == COND_AFTER)
		left = ph->since_ms + c->ms - clock_ms();
	else if (c->kind == COND_AT)
		left = (c->ms * 1000 - clock_wall_us() + 999) / 1000;
	else
		return -1;
	return left < 0 ? 0 : left;
}

/* stall: ms until the soonest target (-1: any) would have stalled long enough, if no call comes. */
static int64_t stall_due_ms(const struct triggers *tg, const struct condition *c, int target,
			    const struct phase *ph)
{
	int probe = trigger_calls_probe_id(tg->calls, c);
	struct trigger_measure m;
	int64_t due = -1;

	for (int i = target < 0 ? 0 : target; probe >= 0 && i < tg->known; i++) {
		if (!tg->gone[i] && trigger_calls_stalled(tg, i, probe, ph->since_ms, &m))
			due = clock_sooner(due, m.value_ns >= c->limit_ns ?
							0 :
							(int64_t)((c->limit_ns - m.value_ns + 999999) /
								  1000000));
		if (target >= 0)
			break;
	}
	/*
	 * Before the first call there is nothing to wait for but that call,
	 * which no timer sees: look again every STALL_LOOK_MS.
	 */
	return due < 0 && probe >= 0 ? STALL_LOOK_MS : due;
}

int64_t trigger_cond_due_in(const struct triggers *tg, const struct condition *c, int target,
			    const struct phase *ph)
{
	return c->kind == COND_STALL ? stall_due_ms(tg, c, target, ph) : trigger_cond_due_ms(c, ph);
}
