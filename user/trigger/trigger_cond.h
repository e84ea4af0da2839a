/* SPDX-License-Identifier: MIT */
/*
 * When a condition is met (trigger_cond.c): each kind measured from the
 * phase it began, so one condition serves a first window, a repeated one,
 * a stop and a script's wait alike. Inside the trigger engine only.
 */
#ifndef DYNPROF_TRIGGER_COND_H
#define DYNPROF_TRIGGER_COND_H

#include <stdbool.h>
#include <stdint.h>

#include "config/rule.h"
#include "shared/compiler.h"

struct triggers;

/* The state a condition measures from: set when it begins waiting. */
struct phase {
	int64_t since_ms;        /* clock_ms(): +DURATION counts from here */
	uint64_t sig_base;       /* signal count when it began */
	uint64_t file_base;      /* file appearances when it began */
	uint64_t call_threshold; /* COND_CALL: the absolute count that meets it */
};

/*
 * Begin waiting for `c` on `target` (-1: any target, a waiter), calls
 * counted from call_base. 0, or a negative errno when a call threshold
 * could not be armed on the target (printed; it would never fire there).
 */
int trigger_phase_begin(struct triggers *tg, const struct condition *c, int target,
			uint64_t call_base, struct phase *ph) DP_MUST_CHECK;
bool trigger_cond_met(const struct triggers *tg, const struct condition *c, int target,
		      const struct phase *ph);
/* ms until `c` is met by the clock alone (-1: not a clock condition). */
int64_t trigger_cond_due_ms(const struct condition *c, const struct phase *ph);
/*
 * The same for `c` on `target` (-1: any), with stall: conditions: ms until
 * the stall would be long enough if no call comes meanwhile (a call moves
 * it: the caller asks again after each wake-up).
 */
int64_t trigger_cond_due_in(const struct triggers *tg, const struct condition *c, int target,
			    const struct phase *ph);
#define STALL_LOOK_MS 100 /* a stall: whose function was not called yet: looked at this often */

#endif /* DYNPROF_TRIGGER_COND_H */
