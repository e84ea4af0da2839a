/* SPDX-License-Identifier: MIT */
/*
 * Inside the trigger engine: what every trigger file shares (owned by
 * triggers.c: the session, the rules, the targets taken in), and one
 * pointer to each part, whose contents are its own file's:
 *   in       trigger_inputs.c  signals and files
 *   calls    trigger_calls.c   probes, the call counter, counts per target
 *   runs     trigger_runs.c    the rule state machine (the only writer)
 *   waiters  trigger_waiters.c scripts' waits
 *   record   trigger_record.c  the window record
 * trigger_round.c drives the runs against the session; trigger_cond.c
 * tells when a condition is met. Not for files outside trigger/.
 */
#ifndef DYNPROF_TRIGGERS_IMPL_H
#define DYNPROF_TRIGGERS_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "trigger/trigger_cond.h"
#include "trigger/trigger_runs.h"
#include "trigger/triggers.h"

struct trigger_inputs;
struct trigger_calls;
struct trigger_waiters;
struct trigger_record;

struct triggers {
	struct session *s;
	struct window_rule *rules; /* [nrules]: the --window ones first (their strings borrowed) */
	struct phase *origin;      /* [nrules]: what a joiner's first start counts from */
	int nrules;
	int nrules_given; /* --window rules; those after were added while running (owned) */
	int rules_room;
	struct procmodel *model;      /* may be NULL */
	int64_t cards_recheck_at;     /* next /proc look at card-less targets an `open` waits on */
	int64_t start_ms;             /* when the session's clock started (+DURATION of start=) */
	int known;                    /* slots seen (session indexes below this) */
	struct session_mark followed; /* session_shape when follow_targets last walked them */
	int room;                     /* slots the per-target arrays hold (grow_room) */
	bool *gone;                   /* [target]: left, its runs done */
	unsigned *serial;             /* [target]: which target the slot held when taken in */
	char (*exe)[256];             /* [target]: its executable, read when it joined */
	bool *send_start, *send_stop; /* [target]: this round's commands (trigger_round.c) */
	struct trigger_inputs *in;
	struct trigger_calls *calls;
	struct rule_run *runs; /* [target * nrules + rule] */
	struct trigger_waiters *waiters;
	struct trigger_record *record;
};

static inline struct rule_run *run_of(const struct triggers *tg, int target, int rule)
{
	return &tg->runs[target * tg->nrules + rule];
}

static inline int target_pid(const struct triggers *tg, int target)
{
	return session_target_pid(tg->s, target);
}

/* trigger_round.c: the runs driven against the session. */
/* Step every rule on every target, send what is due; true when something was sent. */
bool trigger_evaluate(struct triggers *tg);
/* The session's word that a rule's command to target index was replied (session_on_reply). */
void trigger_replied(void *ctx, int index, enum proto_command cmd);
/* Target i joined: its runs wait for their first start. */
void trigger_runs_take_in(struct triggers *tg, int i);
/* Target i left / the run ends: open windows recorded, runs done. */
void trigger_runs_let_go(struct triggers *tg, int i);
void trigger_runs_quit(struct triggers *tg);
/* ms until a run's time-based condition or retry is due; -1: none. */
int64_t trigger_runs_due_ms(const struct triggers *tg);

/* trigger_add.c: room in every per-rule array for one more rule. False: out of memory. */
bool trigger_rules_grow(struct triggers *tg);

/* trigger_record.c: window r of target i closed: one record line. */
void trigger_record_window(struct triggers *tg, int i, int r);
void trigger_record_close(struct trigger_record *rec);
/* Lines whose windows now have their fate written (all: every line, the run's end). */
void trigger_record_flush(struct triggers *tg, bool all);

/* trigger_waiters.c */
struct trigger_waiters *trigger_waiters_new(void);
void trigger_waiters_close(struct trigger_waiters *ws);
int64_t trigger_waiters_due_ms(const struct triggers *tg);
/* A probe began counting in target i: the waits on it armed there. */
void trigger_waiters_rearm(struct triggers *tg, int i, int probe);

#endif /* DYNPROF_TRIGGERS_IMPL_H */
