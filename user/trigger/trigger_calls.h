/* SPDX-License-Identifier: MIT */
/*
 * The trigger engine's side of call counting (callcount.h), owned by
 * trigger_calls.c: the LIB:SYMBOL probes conditions name, the kernel
 * counter, and per target each probe's state and last count seen.
 * Inside the trigger engine only.
 */
#ifndef DYNPROF_TRIGGER_CALLS_H
#define DYNPROF_TRIGGER_CALLS_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>

#include "config/rule.h"
#include "shared/compiler.h"

#define TRIGGER_MAX_PROBES 16 /* distinct probes: LIB:SYMBOL pairs, each way of timing one apart */

/* Conditions met on a counter the kernel keeps (calls, or calls past a limit): thresholds arm on it. */
static inline bool cond_counted(int kind)
{
	return kind == COND_CALL || kind == COND_SLOW || kind == COND_GAP;
}

/* What a timed probe measured when it fired: the duration, gap or stall, and the typical value then. */
struct trigger_measure {
	uint64_t value_ns;
	uint64_t typical_ns;
};

struct triggers;
struct trigger_calls;

/*
 * Called after the runs' thresholds of `probe` were armed again in target i
 * (its library appeared), for the other thresholds waiting on it: the
 * scripts' waits (trigger_waiters_rearm), which build on this file, so
 * they are reached through this hook rather than called.
 */
typedef void (*trigger_rearm_fn)(struct triggers *tg, int i, int probe);

/* NULL: out of memory. rearm_more may be NULL. */
struct trigger_calls *trigger_calls_new(trigger_rearm_fn rearm_more);
void trigger_calls_close(struct trigger_calls *calls);

/* Register a call:, slow:, gap: or stall: condition's probe (once per probe). 0, or -1 printed. */
int trigger_calls_add(struct trigger_calls *calls, const struct condition *c) DP_MUST_CHECK;
/*
 * While running (a rule added): register c's probe, load the kernel
 * counter if this is the first, and probe it in every present target. 0,
 * or -1 with the reason in err (nothing registered then).
 */
int trigger_calls_add_live(struct triggers *tg, const struct condition *c, char *err,
			   size_t errlen) DP_MUST_CHECK;
/* The armed runs of target i that need a probe that can never count there fail. */
void trigger_calls_fail_runs(struct triggers *tg, int i);
/* The probe a call: condition counts with; -1 when not registered. */
int trigger_calls_probe_id(const struct trigger_calls *calls, const struct condition *c);
/* Load the kernel counter when a probe was registered. 0, or -1 printed. */
int trigger_calls_start(struct trigger_calls *calls) DP_MUST_CHECK;

/*
 * Target i joined: probe every LIB:SYMBOL in it; the runs needing a probe
 * that can never count there fail. -1 when one cannot (printed).
 */
int trigger_calls_take_in(struct triggers *tg, int i) DP_MUST_CHECK;
/* Target i left: stop counting in it. */
void trigger_calls_forget(struct triggers *tg, int i);
/* Room for targets [0, ntargets) (from `old`), new ones zeroed. 0 or -ENOMEM (unchanged). */
int trigger_calls_grow(struct trigger_calls *calls, int old, int ntargets) DP_MUST_CHECK;
/* Slot i holds a new target: its counts start again. */
void trigger_calls_reset(struct trigger_calls *calls, int i);

/* slow:, gap: the last record's measure (0s: none, or made up from a counter read). */
struct trigger_measure trigger_calls_measure(const struct triggers *tg, int i, int probe);
/*
 * stall: how long target i has made no call of `probe`, counted from the
 * later of its last call and since_ms (clock_ms), with the typical gap.
 * False before its first call, or where it is not probed.
 */
bool trigger_calls_stalled(const struct triggers *tg, int i, int probe, int64_t since_ms,
			   struct trigger_measure *m);

/* The last count seen of `probe` in target i / the kernel's count now. */
uint64_t trigger_calls_seen(const struct triggers *tg, int i, int probe);
uint64_t trigger_calls_now(const struct triggers *tg, int i, int probe);

/*
 * Arm `threshold` of `probe` in target i, or in every live target (-1)
 * where it counts. 0, or the first negative errno of callcount_arm, with
 * one error line per target (the threshold would never fire there).
 */
int trigger_calls_arm(struct triggers *tg, int target, int probe, uint64_t threshold) DP_MUST_CHECK;
/* Arm it again in target i after its library appeared (no count read). 0 or -errno, printed. */
int trigger_calls_arm_one(struct triggers *tg, int i, int probe, uint64_t threshold) DP_MUST_CHECK;

/* The console's side: at most one pollfd; a refresh due (CALLCOUNT_REFRESH_MS). */
int trigger_calls_pollfds(const struct trigger_calls *calls, struct pollfd *pfds, int max);
bool trigger_calls_event(struct triggers *tg, const struct pollfd *pfd);
bool trigger_calls_pending(const struct trigger_calls *calls);
void trigger_calls_refresh(struct triggers *tg);

#endif /* DYNPROF_TRIGGER_CALLS_H */
