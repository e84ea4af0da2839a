/* SPDX-License-Identifier: MIT */
/*
 * Unattended control of a run: the --window rules, the --commands script
 * and the --control channel, set up together for attach and launch mode.
 * Everything that can be wrong with them is found by automation_prepare,
 * before any target is contacted.
 *
 * Errors: convention 3 of docs/ERRORS.md (-1, printed).
 */
#ifndef DYNPROF_AUTOMATION_H
#define DYNPROF_AUTOMATION_H

#include <stdbool.h>

#include "cli/console.h"
#include "config/options.h"
#include "config/rule.h"
#include "session/session.h"
#include "shared/compiler.h"

struct procmodel;

struct automation {
	struct window_rule rules[OPTIONS_MAX_WINDOWS];
	int nrules;
	struct script *commands;
	struct control *control;
	struct triggers *triggers;
	struct remote *remote;
	bool quit_requested;
};

/* Parse the rules, read the commands file, open the control channel. 0 or -1 (printed). */
int automation_prepare(struct automation *a, const struct options *o) DP_MUST_CHECK;
/* Some rule or command needs the process model (an `open` condition). */
bool automation_needs_model(const struct automation *a);
/*
 * Attach mode, before any target is reached: every call:LIB:SYMBOL of the
 * rules and commands checked in every --pid (a pid list; not auto), so a
 * rule that can never fire is refused before anything connects. 0 or -1
 * (printed).
 */
int automation_check_targets(const struct automation *a, const struct options *o) DP_MUST_CHECK;
/* Start the engine on the session (attach mode: probes its targets now). 0 or -1 (printed). */
int automation_start(struct automation *a, struct session *s, struct procmodel *model) DP_MUST_CHECK;
/* What the console must watch. */
void automation_sources(struct automation *a, struct console_sources *src);
void automation_close(struct automation *a);

#endif /* DYNPROF_AUTOMATION_H */
