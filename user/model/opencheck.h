/* SPDX-License-Identifier: MIT */
/*
 * Card opens seen at the device permission check (the cgroup device hook,
 * discover.h) wait here until the process's fds confirm them: the check
 * runs before the driver's open, which may take a while or fail (and
 * access(2) passes the check too). Each one is tried again after 1, 2, 4
 * ... ms (at most OPENCHECK_STEP_MAX_MS apart) and given up
 * OPENCHECK_GIVE_UP_MS after it came: a failed open, or an open closed
 * again before it was seen, is then never reported. The first try is the
 * caller's (procmodel_confirm_open, at once).
 */
#ifndef DYNPROF_OPENCHECK_H
#define DYNPROF_OPENCHECK_H

#include <stddef.h>
#include <stdint.h>

#include "dynprof/events.h"
#include "model/procmodel.h"
#include "shared/compiler.h"

#define OPENCHECK_STEP_MAX_MS 250
#define OPENCHECK_GIVE_UP_MS 5000
#define OPENCHECK_MAX 4096 /* opens waiting at most */

struct opencheck;

struct opencheck *opencheck_new(void);
void opencheck_free(struct opencheck *c);

/*
 * Wait for ev (an unconfirmed CARD_OPEN, its first try done at now_ms).
 * The same process and device waiting already: nothing added. 0, or
 * -ENOSPC (OPENCHECK_MAX waiting: the caller must rescan /proc instead),
 * -ENOMEM.
 */
int opencheck_add(struct opencheck *c, const struct dp_event *ev, int64_t now_ms) DP_MUST_CHECK;

/* Try the due ones against m: confirmed ones are applied, given up ones dropped. */
void opencheck_run(struct opencheck *c, struct procmodel *m, int64_t now_ms);

/* When the next try is due (clock_ms), or INT64_MAX with none waiting. */
int64_t opencheck_next_ms(const struct opencheck *c);
size_t opencheck_waiting(const struct opencheck *c);

#endif /* DYNPROF_OPENCHECK_H */
