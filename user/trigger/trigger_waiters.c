// SPDX-License-Identifier: MIT
/* Scripts' `wait COND` on the trigger engine's conditions (see triggers.h). */
#include <signal.h>
#include <stdio.h>

#include "trigger/triggers_impl.h"

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
