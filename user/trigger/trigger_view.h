/* SPDX-License-Identifier: MIT */
/*
 * A read-only look at the engine, for `status`: which rules there are and
 * where each stands on one target. Reads only; never changes a run.
 */
#ifndef DYNPROF_TRIGGER_VIEW_H
#define DYNPROF_TRIGGER_VIEW_H

#include <stdbool.h>

#include "config/rule.h"

struct triggers;

/* Rules of the engine (0 for NULL): --window ones first, then those added while running
 * (0-based; numbered r + 1 in messages). */
int triggers_rule_count(const struct triggers *tg);
/* Rule r, NULL out of range. */
const struct window_rule *triggers_rule(const struct triggers *tg, int r);
/* Rule r's text as given (--window's value), NULL out of range. */
const char *triggers_rule_text(const struct triggers *tg, int r);

struct trigger_rule_view {
	const char *text;  /* the rule as given (--window's value) */
	const char *state; /* armed, starting, open, stopping, done */
	int windows;       /* windows it opened on this target */
};

/*
 * Rule `r` on the target at session index `index`: false when the engine
 * has not taken that target in (or it holds another target now), or r is
 * out of range.
 */
bool triggers_rule_view(const struct triggers *tg, int index, int r, struct trigger_rule_view *out);

#endif /* DYNPROF_TRIGGER_VIEW_H */
