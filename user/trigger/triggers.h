/* SPDX-License-Identifier: MIT */
/*
 * Event-triggered windows: the --window rules run on every target of the
 * session, each its own small state machine per target (armed, starting,
 * open, done), fed by call counts from the kernel (callcount.h), the
 * process model (card opens), signals and files (trigger_inputs.h) and
 * the clocks. Targets collect while any rule's window (or the console's)
 * is open for them: START goes out when the first opens, STOP when the
 * last closes. Scripts (--commands, --control) wait on the same
 * conditions through waiters.
 *
 * The console polls triggers_pollfds() with triggers_timeout_ms() and
 * calls triggers_tick() every round.
 *
 * Errors: convention 3 of docs/ERRORS.md (printed) for set-up and start;
 * triggers_wait_begin follows convention 2 (the reason in err, for the script's reply).
 */
#ifndef DYNPROF_TRIGGERS_H
#define DYNPROF_TRIGGERS_H

#include <poll.h>
#include <stdbool.h>

#include "config/rule.h"
#include "session/session.h"
#include "shared/compiler.h"

struct triggers;
struct procmodel;

/* The rules are borrowed and must outlive the engine. NULL: out of memory (printed). */
struct triggers *triggers_new(struct session *s, const struct window_rule *rules, int nrules);
void triggers_close(struct triggers *tg);

/*
 * Register what a condition needs (a signal, a path, a probe) before
 * triggers_start; the rules' own conditions are registered by
 * triggers_new. 0, or -1 after printing why (e.g. too many probes, a
 * library path whose file lacks the symbol).
 */
int triggers_add_condition(struct triggers *tg, const struct condition *c) DP_MUST_CHECK;

/*
 * Start watching: block the signals, load the call counter when a call:
 * condition exists, and probe the targets already in the session (attach
 * mode), so a symbol missing from a mapped library is refused before any
 * window opens. `model` (may be NULL) tells card opens. 0 or -1 (printed).
 */
int triggers_start(struct triggers *tg, struct procmodel *model) DP_MUST_CHECK;

/*
 * Add a rule while running (`window RULE`): registered as a --window rule
 * is, and applied to every present target from now (+DURATION, signals,
 * files and call counts counted from now) and to every later joiner from
 * its join, as --window rules are. On success the engine owns r's strings
 * (r is emptied) and the rule's number (counting --window rules from 1)
 * is returned; -1 with one line in err when the rule needs what this run
 * does not have (call: without BPF uprobes, open without the card-open
 * watch, too many rules, probes or paths).
 */
int triggers_add_rule(struct triggers *tg, struct window_rule *r, char *err, size_t errlen) DP_MUST_CHECK;

/* Reading the rules (every rule, --window ones first, added ones after): trigger/trigger_view.h. */

/* --window rules were given (rules added while running do not count). */
bool triggers_have_rules(const struct triggers *tg);
/* The run ends: windows still open are recorded as closed by quit (call after session_shutdown). */
void triggers_quitting(struct triggers *tg);
/*
 * --window rules were given and every rule (added ones too) is done on
 * every target that was seen (and one was).
 */
bool triggers_exhausted(const struct triggers *tg);
/* Some condition needs the process model (open). */
bool triggers_need_model(const struct triggers *tg);

int triggers_pollfds(const struct triggers *tg, struct pollfd *pfds, int max);
void triggers_event(struct triggers *tg, const struct pollfd *pfd);
/* ms until a time-based condition or a retry is due; -1: none. */
int triggers_timeout_ms(const struct triggers *tg);
/* Take in new and gone targets, evaluate every rule, send what is due. */
void triggers_tick(struct triggers *tg);

/*
 * Waiters: a script's `wait COND`. Per-target conditions are met when one
 * target meets them; exit when no target is left. The condition is
 * borrowed. Returns a waiter id >= 0, or -1 with the reason in err (a
 * signal or function nobody registered before the start cannot be waited for).
 */
int triggers_wait_begin(struct triggers *tg, const struct condition *c, char *err,
			size_t errlen) DP_MUST_CHECK;
bool triggers_wait_met(struct triggers *tg, int id);
void triggers_wait_end(struct triggers *tg, int id);

/*
 * Before any target is touched: whether every rule (and every `wait` of a
 * commands file) can work here. A probe (call:, slow:, gap:, stall:)
 * needs BPF uprobes: as non-root that is known at once, not after the
 * targets were connected. 0, or -1 with the first rule that cannot work
 * named in err.
 */
int triggers_check_needs(const struct window_rule *rules, int n, const struct condition *const *waits,
			 int nwaits, char *err, size_t errlen) DP_MUST_CHECK;

#endif /* DYNPROF_TRIGGERS_H */
