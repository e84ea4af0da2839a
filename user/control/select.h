/* SPDX-License-Identifier: MIT */
/*
 * The targets a selector (config/rule.h) names, among those in the
 * session now, as model/match.h matches a process: a user name is the
 * target's own (its passwd's), as --user takes it.
 *
 * Errors: none; matching nothing is said in err (convention 2 of
 * docs/ERRORS.md: the line in err).
 */
#ifndef DYNPROF_SELECT_H
#define DYNPROF_SELECT_H

#include <stdbool.h>
#include <stddef.h>

#include "config/rule.h"
#include "session/session.h"
#include "shared/compiler.h"

/*
 * Mark in `which` (session_target_count(s) entries) the live targets that
 * `sel` matches. Returns how many; 0 with err "no target matches SEL".
 */
int select_targets(const struct session *s, const struct selector *sel, bool *which, char *err,
		   size_t errlen) DP_MUST_CHECK;

#endif /* DYNPROF_SELECT_H */
