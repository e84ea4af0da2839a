/* SPDX-License-Identifier: MIT */
/*
 * The rule state machine: one rule on one target (a "run"), and the table
 * of runs of the engine. Pure: no session, no clock, no output. Each
 * transition takes what happened (a condition met, START's or STOP's
 * answer, the target leaving) with the times it needs, writes the run,
 * and returns what the caller must do (RUN_DO_*): send START or STOP,
 * record the window that closed, begin waiting for a condition.
 * trigger_round.c drives it against the session; the unit test drives it
 * against a fake one. Only trigger_runs.c writes a run (grep '\.state =').
 */
#ifndef DYNPROF_TRIGGER_RUNS_H
#define DYNPROF_TRIGGER_RUNS_H

#include <stdbool.h>
#include <stdint.h>

#include "shared/compiler.h"
#include "trigger/trigger_cond.h"

#define RUN_RETRY_FIRST_MS 100 /* NOT_SET_DEVICE: first retry after this */
#define RUN_RETRY_MAX_MS 3200  /* ... doubling up to this */

enum run_state {
	RUN_ARMED,    /* waiting for the start condition */
	RUN_FIRED,    /* start fired, START being sent */
	RUN_STARTING, /* the target had no device yet: START retried */
	RUN_OPEN,     /* the window is open */
	RUN_STOPPING, /* stop fired, STOP being sent */
	RUN_DONE,     /* no more windows from this rule on this target */
};

/* One rule on one target. Read anywhere in trigger/; written by the transitions only. */
struct rule_run {
	enum run_state state;
	int windows;        /* windows opened */
	struct phase phase; /* of the condition waited for now (trigger_cond.h fills it) */
	int64_t opened_ms;  /* monotonic ms when the window opened */
	int64_t retry_ms, retry_delay_ms;
	int64_t start_fired_us, stop_fired_us; /* wall clock */
	int64_t start_ack_us, stop_ack_us;
	uint64_t start_count; /* COND_CALL start: the count when it fired */
	uint64_t ack_count;   /* COND_CALL start: the count when START was acknowledged */
	uint64_t start_value_ns, start_typical_ns; /* slow:, gap:, stall: start: what fired it (ns) */
	uint64_t stop_value_ns, stop_typical_ns;   /* the same for the stop */
	bool failed; /* a condition cannot be met here: no more windows */
};

/* What a transition asks of its caller (a bit set). */
enum run_do {
	RUN_DO_START = 1 << 0,      /* send START (none when the target collects already) */
	RUN_DO_STOP = 1 << 1,       /* send STOP */
	RUN_DO_RECORD = 1 << 2,     /* the window closed: record it */
	RUN_DO_WAIT_START = 1 << 3, /* begin waiting for the start condition */
	RUN_DO_WAIT_STOP = 1 << 4,  /* begin waiting for the stop condition */
	RUN_DO_NO_DEVICE = 1 << 5,  /* first NOT_SET_DEVICE: say START is retried */
};

/* The target as a run sees it when START or STOP was answered. */
struct run_answer {
	bool collecting; /* a window is open in it now */
	bool live;       /* still a target */
	int status;      /* enum proto_status of the reply */
	int64_t ack_us;  /* when it was answered (wall clock) */
};

/* What the machine needs of the rule. */
struct run_rule {
	int repeat;    /* windows at most; 0: no limit */
	bool has_stop; /* a stop condition (else the window lasts until exit or quit) */
};

/* A timed condition's edge fired having measured value_ns against typical_ns (for the record). */
void run_measured(struct rule_run *run, bool start, uint64_t value_ns, uint64_t typical_ns);
/* ARMED -> FIRED: the start condition was met. RUN_DO_START. */
unsigned run_start_fired(struct rule_run *run, int64_t now_us, uint64_t count);
/*
 * FIRED/STARTING: START was answered (or the target collected already).
 * Collecting: OPEN (WAIT_STOP). No device yet: STARTING, retried after
 * 100 ms doubling to 3.2 s (the first time WAIT_STOP | NO_DEVICE: the
 * stop runs meanwhile). Anything else: DONE. Other states: nothing.
 */
unsigned run_start_answered(struct rule_run *run, const struct run_answer *a, int64_t now_ms,
			    uint64_t ack_count);
/* STARTING: START is due again (RUN_DO_START) when its retry time came. */
unsigned run_retry_due(const struct rule_run *run, int64_t now_ms);
/* STARTING -> ARMED: the stop fired before the target had a device: no window. */
unsigned run_stop_before_start(struct rule_run *run);
/*
 * OPEN: the stop condition was met. When another window keeps the target
 * collecting (others_hold) the window closes now with no STOP; else
 * STOPPING (RUN_DO_STOP).
 */
unsigned run_stop_fired(struct rule_run *run, const struct run_rule *w, int64_t now_us, bool others_hold);
/* STOPPING: STOP was answered. Closed when it stopped; DONE when it failed or left. */
unsigned run_stop_answered(struct rule_run *run, const struct run_rule *w, const struct run_answer *a);
/* OPEN: the target stopped collecting without us (the console, the server): closed at ack_us. */
unsigned run_collection_ended(struct rule_run *run, const struct run_rule *w, int64_t ack_us);
/* Any state -> DONE: the target left (an open window ends with it: RECORD). */
unsigned run_target_left(struct rule_run *run, int64_t now_us);
/* OPEN -> DONE: the run ends (quit) with the window open (RECORD). */
unsigned run_quit(struct rule_run *run, int64_t now_us);
/*
 * A condition of the rule can never be met on this target (a probe that
 * cannot count, a threshold that cannot be armed): DONE, or for an open
 * window, no more windows after it closes (by the console, exit or quit).
 */
unsigned run_failed(struct rule_run *run);

/* Runs of one target (nrules of them): one other than `except` is open. */
bool runs_other_open(const struct rule_run *target_runs, int nrules, int except);

/* The table: [target * nrules + rule], for ntargets targets. NULL: out of memory. */
struct rule_run *runs_new(int ntargets, int nrules);
/* The table made to hold `ntargets` (from `old`), the new runs zeroed. 0 or -ENOMEM (unchanged). */
int runs_grow(struct rule_run **runs, int old, int ntargets, int nrules) DP_MUST_CHECK;
/*
 * A rule added: the table of `ntargets` targets laid out again for
 * nrules + 1 rules, each target's runs kept and the new rule's zeroed
 * (ARMED). 0 or -ENOMEM (unchanged).
 */
int runs_widen(struct rule_run **runs, int ntargets, int nrules) DP_MUST_CHECK;
void runs_free(struct rule_run *runs);

#endif /* DYNPROF_TRIGGER_RUNS_H */
