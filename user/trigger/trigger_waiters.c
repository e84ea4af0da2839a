// SPDX-License-Identifier: MIT
/* Scripts' `wait COND` on the trigger engine's conditions (see triggers.h). */
#include <stdio.h>
#include <stdlib.h>

#include "trigger/trigger_calls.h"
#include "trigger/trigger_cond.h"
#include "trigger/trigger_inputs.h"
#include "trigger/triggers_impl.h"

#define TRIGGER_MAX_WAITERS 16

struct waiter {
	bool used;
	const struct condition *c;
	struct phase phase;
};

struct trigger_waiters {
	struct waiter w[TRIGGER_MAX_WAITERS];
};

struct trigger_waiters *trigger_waiters_new(void)
{
	return calloc(1, sizeof(struct trigger_waiters));
}

void trigger_waiters_close(struct trigger_waiters *ws)
{
	free(ws);
}

/* Why `c` cannot be waited for in this run, in err; 0 when it can. */
static int refuse(struct triggers *tg, const struct condition *c, char *err, size_t errlen)
{
	if (cond_probes(c->kind) && trigger_calls_probe_id(tg->calls, c) < 0) {
		snprintf(err, errlen,
			 "wait %s: the function is not probed (name it in --commands or a --window rule)",
			 c->text);
		return -1;
	}
	if (c->kind == COND_OPEN && !tg->model) {
		snprintf(err, errlen,
			 "wait open: card opens are not watched in this run (name it in --commands or a --window rule)");
		return -1;
	}
	if (c->kind == COND_SIGNAL && !trigger_inputs_watches_signal(tg->in, c->signo)) {
		snprintf(err, errlen,
			 "wait %s: the signal is not watched (name it in --commands or a --window rule)",
			 c->text);
		return -1;
	}
	if (c->kind == COND_FILE && trigger_inputs_add_file(tg->in, c->path)) {
		snprintf(err, errlen, "wait %s: too many paths watched", c->text);
		return -1;
	}
	return 0;
}

int triggers_wait_begin(struct triggers *tg, const struct condition *c, char *err, size_t errlen)
{
	for (int w = 0; w < TRIGGER_MAX_WAITERS; w++) {
		struct waiter *wt = &tg->waiters->w[w];

		if (wt->used)
			continue;
		if (refuse(tg, c, err, errlen))
			return -1;
		*wt = (struct waiter){ .used = true, .c = c };
		/*
		 * Calls count from each target's join: wait call:...#N means the
		 * N-th call.
		 */
		if (trigger_phase_begin(tg, c, -1, 0, &wt->phase)) {
			/* A target where it cannot be armed was named (printed); the others may still meet it. */
		}
		return w;
	}
	snprintf(err, errlen, "more than %d waits at once", TRIGGER_MAX_WAITERS);
	return -1;
}

bool triggers_wait_met(struct triggers *tg, int id)
{
	const struct waiter *w = &tg->waiters->w[id];

	/* A file already there satisfies a wait: the script waits for it to exist. */
	if (w->c->kind == COND_FILE && trigger_inputs_file_present(tg->in, w->c->path))
		return true;
	return trigger_cond_met(tg, w->c, -1, &w->phase);
}

void triggers_wait_end(struct triggers *tg, int id)
{
	tg->waiters->w[id].used = false;
}

int64_t trigger_waiters_due_ms(const struct triggers *tg)
{
	int64_t due = -1;

	for (int w = 0; w < TRIGGER_MAX_WAITERS; w++) {
		const struct waiter *wt = &tg->waiters->w[w];
		int64_t d = wt->used ? trigger_cond_due_in(tg, wt->c, -1, &wt->phase) : -1;

		if (d >= 0 && (due < 0 || d < due))
			due = d;
	}
	return due;
}

void trigger_waiters_rearm(struct triggers *tg, int i, int probe)
{
	for (int w = 0; w < TRIGGER_MAX_WAITERS; w++) {
		const struct waiter *wt = &tg->waiters->w[w];

		if (wt->used && cond_counted(wt->c->kind) &&
		    trigger_calls_probe_id(tg->calls, wt->c) == probe &&
		    trigger_calls_arm_one(tg, i, probe, wt->phase.call_threshold)) {
			/* Printed; other targets may still meet the wait. */
		}
	}
}
