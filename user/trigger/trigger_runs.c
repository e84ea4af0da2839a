// SPDX-License-Identifier: MIT
/*
 * The rule state machine (see trigger_runs.h): every write of a run is
 * here, each a named transition that returns what its caller must do.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dynprof/proto.h"
#include "trigger/trigger_runs.h"

void run_measured(struct rule_run *run, bool start, uint64_t value_ns, uint64_t typical_ns)
{
	if (start) {
		run->start_value_ns = value_ns;
		run->start_typical_ns = typical_ns;
	} else {
		run->stop_value_ns = value_ns;
		run->stop_typical_ns = typical_ns;
	}
}

unsigned run_start_fired(struct rule_run *run, int64_t now_us, uint64_t count)
{
	if (run->state != RUN_ARMED)
		return 0;
	run->state = RUN_FIRED;
	run->start_fired_us = now_us;
	run->stop_fired_us = 0;
	run->start_count = count;
	run->retry_delay_ms = RUN_RETRY_FIRST_MS;
	return RUN_DO_START;
}

static unsigned opened(struct rule_run *run, const struct run_answer *a, int64_t now_ms, uint64_t ack_count)
{
	run->state = RUN_OPEN;
	run->windows++;
	run->opened_ms = now_ms;
	run->start_ack_us = a->ack_us;
	run->ack_count = ack_count;
	return RUN_DO_WAIT_STOP;
}

/* No device yet: try again later; the stop condition runs meanwhile. */
static unsigned no_device(struct rule_run *run, int64_t now_ms)
{
	unsigned todo = run->state == RUN_FIRED ? RUN_DO_WAIT_STOP | RUN_DO_NO_DEVICE : 0;

	run->state = RUN_STARTING;
	run->retry_ms = now_ms + run->retry_delay_ms;
	if (run->retry_delay_ms < RUN_RETRY_MAX_MS)
		run->retry_delay_ms *= 2;
	return todo;
}

unsigned run_start_answered(struct rule_run *run, const struct run_answer *a, int64_t now_ms,
			    uint64_t ack_count)
{
	if (run->state != RUN_FIRED && run->state != RUN_STARTING)
		return 0;
	if (a->collecting)
		return opened(run, a, now_ms, ack_count);
	if (a->live && a->status == PROTO_NOT_SET_DEVICE)
		return no_device(run, now_ms);
	run->state = RUN_DONE;
	return 0;
}

unsigned run_retry_due(const struct rule_run *run, int64_t now_ms)
{
	return run->state == RUN_STARTING && now_ms >= run->retry_ms ? RUN_DO_START : 0;
}

unsigned run_stop_before_start(struct rule_run *run)
{
	if (run->state != RUN_STARTING)
		return 0;
	run->state = RUN_ARMED;
	return RUN_DO_WAIT_START;
}

/* The window closed (acknowledged at ack_us): armed again, or done after its last. */
static unsigned closed(struct rule_run *run, const struct run_rule *w, int64_t ack_us)
{
	run->stop_ack_us = ack_us;
	if (run->failed || (w->repeat && run->windows >= w->repeat)) {
		run->state = RUN_DONE;
		return RUN_DO_RECORD;
	}
	run->state = RUN_ARMED;
	return RUN_DO_RECORD | RUN_DO_WAIT_START;
}

unsigned run_stop_fired(struct rule_run *run, const struct run_rule *w, int64_t now_us, bool others_hold)
{
	if (run->state != RUN_OPEN)
		return 0;
	run->stop_fired_us = now_us;
	if (others_hold) /* the target keeps collecting for them */
		return closed(run, w, now_us);
	run->state = RUN_STOPPING;
	return RUN_DO_STOP;
}

unsigned run_stop_answered(struct rule_run *run, const struct run_rule *w, const struct run_answer *a)
{
	if (run->state != RUN_STOPPING)
		return 0;
	if (!a->collecting && a->live)
		return closed(run, w, a->ack_us);
	run->state = RUN_DONE;
	return 0;
}

unsigned run_collection_ended(struct rule_run *run, const struct run_rule *w, int64_t ack_us)
{
	return run->state == RUN_OPEN ? closed(run, w, ack_us) : 0;
}

/* Ended with its window open: the end is both the stop's firing and its acknowledgement. */
static unsigned ended_open(struct rule_run *run, int64_t now_us)
{
	run->stop_fired_us = now_us;
	run->stop_ack_us = now_us;
	run->state = RUN_DONE;
	return RUN_DO_RECORD;
}

unsigned run_target_left(struct rule_run *run, int64_t now_us)
{
	if (run->state == RUN_OPEN || run->state == RUN_STOPPING)
		return ended_open(run, now_us);
	run->state = RUN_DONE;
	return 0;
}

unsigned run_quit(struct rule_run *run, int64_t now_us)
{
	return run->state == RUN_OPEN ? ended_open(run, now_us) : 0;
}

unsigned run_failed(struct rule_run *run)
{
	run->failed = true;
	if (run->state != RUN_OPEN && run->state != RUN_STOPPING)
		run->state = RUN_DONE;
	return 0;
}

bool runs_other_open(const struct rule_run *target_runs, int nrules, int except)
{
	for (int r = 0; r < nrules; r++)
		if (r != except && target_runs[r].state == RUN_OPEN)
			return true;
	return false;
}

struct rule_run *runs_new(int ntargets, int nrules)
{
	return calloc((size_t)ntargets * (size_t)(nrules ? nrules : 1), sizeof(struct rule_run));
}

int runs_grow(struct rule_run **runs, int old, int ntargets, int nrules)
{
	size_t per = (size_t)(nrules ? nrules : 1);
	struct rule_run *grown = realloc(*runs, (size_t)ntargets * per * sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	memset(grown + (size_t)old * per, 0, (size_t)(ntargets - old) * per * sizeof(*grown));
	*runs = grown;
	return 0;
}

int runs_widen(struct rule_run **runs, int ntargets, int nrules)
{
	size_t old = (size_t)(nrules ? nrules : 1), per = (size_t)nrules + 1;
	struct rule_run *wide = calloc((size_t)ntargets * per, sizeof(*wide));

	if (!wide)
		return -ENOMEM;
	for (size_t i = 0; i < (size_t)ntargets; i++)
		memcpy(wide + i * per, *runs + i * old, (size_t)nrules * sizeof(*wide));
	free(*runs);
	*runs = wide;
	return 0;
}

void runs_free(struct rule_run *runs)
{
	free(runs);
}
