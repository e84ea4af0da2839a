/* SPDX-License-Identifier: MIT */
/*
 * Inside the trigger engine (triggers.c: rules' windows and waiters;
 * trigger_cond.c: when a condition is met). Not for other files.
 */
#ifndef DYNPROF_TRIGGERS_IMPL_H
#define DYNPROF_TRIGGERS_IMPL_H

#include <stdint.h>
#include <stdio.h>

#include "kernel/callcount.h"
#include "proc/procmodel.h"
#include "trigger/trigger_inputs.h"
#include "trigger/triggers.h"
#include "shared/compiler.h"

#define TRIGGER_MAX_PROBES 16  /* distinct LIB:SYMBOL pairs */
#define TRIGGER_MAX_WAITERS 16

/* The state a condition measures from: set when it begins waiting. */
struct phase {
	int64_t since_ms;        /* clock_ms(): +DURATION counts from here */
	uint64_t sig_base;       /* signal count when it began */
	uint64_t file_base;      /* file appearances when it began */
	uint64_t call_threshold; /* COND_CALL: the absolute count that meets it */
};

enum run_state {
	RUN_ARMED,    /* waiting for the start condition */
	RUN_FIRED,    /* start fired, START being sent */
	RUN_STARTING, /* the target had no device yet: START retried */
	RUN_OPEN,     /* the window is open */
	RUN_STOPPING, /* stop fired, STOP being sent */
	RUN_DONE,     /* no more windows from this rule on this target */
};

/* One rule on one target. */
struct rule_run {
	enum run_state state;
	int windows;              /* windows opened */
	struct phase phase;       /* of the condition waited for now */
	int64_t opened_ms;        /* clock_ms() when the window opened */
	int64_t retry_ms, retry_delay_ms;
	int64_t start_fired_us, stop_fired_us; /* wall clock */
	int64_t start_ack_us;
	uint64_t start_count;     /* COND_CALL start: the count when it fired */
	uint64_t ack_count;       /* COND_CALL start: the count when START was acknowledged */
};

enum probe_state { PROBE_NONE, PROBE_PENDING, PROBE_COUNTING, PROBE_FAILED };

struct probe {
	const char *lib, *symbol;
};

struct waiter {
	bool used;
	const struct condition *c;
	struct phase phase;
};

struct triggers {
	struct session *s;
	const struct window_rule *rules;
	int nrules;
	struct procmodel *model;
	struct callcount *cc;
	struct trigger_inputs in;
	int64_t start_ms;         /* when the session's clock started (+DURATION of start=) */
	struct probe probes[TRIGGER_MAX_PROBES];
	int nprobes;
	int known;                /* targets taken in (session indexes below this) */
	bool *gone;               /* [target]: left, its runs done */
	char (*exe)[256];         /* [target]: its executable, read when it joined */
	uint64_t *counts;         /* [target * TRIGGER_MAX_PROBES + probe]: last count seen */
	unsigned char *probe_st;  /* [target * TRIGGER_MAX_PROBES + probe]: enum probe_state */
	struct rule_run *runs;    /* [target * nrules + rule] */
	struct waiter waiters[TRIGGER_MAX_WAITERS];
	bool *want_start, *want_stop; /* [target]: this round's commands */
	FILE *record;             /* <output>/<pid>_dynprof_windows (JSON lines) */
};

static inline struct rule_run *run_of(const struct triggers *tg, int target, int rule)
{
	return &tg->runs[target * tg->nrules + rule];
}

/* The last count seen of `probe` in `target`. */
static inline uint64_t *count_of(const struct triggers *tg, int target, int probe)
{
	return &tg->counts[target * TRIGGER_MAX_PROBES + probe];
}

/* enum probe_state of `probe` in `target`. */
static inline unsigned char *probe_state_of(const struct triggers *tg, int target, int probe)
{
	return &tg->probe_st[target * TRIGGER_MAX_PROBES + probe];
}

/* trigger_calls.c */
int trigger_watch_probes(struct triggers *tg, int i) DP_MUST_CHECK;
void trigger_fail_probe_runs(struct triggers *tg, int i, int probe);
const struct callcount_handlers *trigger_call_handlers(struct triggers *tg);

/* trigger_runs.c: step every rule on every target, send what is due; true when something was sent. */
bool trigger_evaluate(struct triggers *tg);

/* trigger_record.c: one record line for window r of target i, closed (acknowledged) at stop_ack_us. */
void trigger_record_window(struct triggers *tg, int i, int r, int64_t stop_ack_us);

/* trigger_cond.c */
int trigger_probe_id(const struct triggers *tg, const struct condition *c);
/* Begin waiting for `c` on `target` (-1: any target, a waiter), calls counted from call_base. */
void trigger_phase_begin(struct triggers *tg, const struct condition *c, int target, uint64_t call_base,
			 struct phase *ph);
bool trigger_cond_met(const struct triggers *tg, const struct condition *c, int target,
		      const struct phase *ph);
/* ms until `c` is met by the clock alone (-1: not a clock condition). */
int64_t trigger_cond_due_ms(const struct condition *c, const struct phase *ph);

#endif /* DYNPROF_TRIGGERS_IMPL_H */
