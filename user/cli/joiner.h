/* SPDX-License-Identifier: MIT */
/*
 * Card holders joining a session as they come, for the modes that follow
 * processes (launch mode's tree, follow mode's host): the join of a
 * listening card holder (a failed one tried again a few times when it
 * failed for now, else not until the process changes), a target's leave at its exit or exec, and the one line saying
 * why a card holder serves no socket (with --host-sys asking dynprof for
 * data, such a holder joins instead, with dynprof's stand-in server:
 * host-only windows). Which processes may join is the
 * caller's: it calls these for the ones it wants.
 */
#ifndef DYNPROF_JOINER_H
#define DYNPROF_JOINER_H

#include <stdbool.h>

#include "common/pidtab.h"
#include "config/options.h"
#include "model/procmodel.h"
#include "session/session.h"

struct tracker;

struct joiner {
	struct session *s;
	struct tracker *t;
	struct pidtab failed; /* joins that failed: tried again later (a failure for now) or not until the process changes */
	struct pidtab nosock; /* card holders without a socket: first seen then, or told (-1) */
	struct pidtab image;  /* targets: a hash of the exe and cmdline they ran when they joined */
	struct pidtab served; /* joined: the model's socket pass leaves them out (procmodel_set_served) */
	/*
	 * The mode's candidates looked at every round (follow: its card
	 * holders; NULL: none): a served one is out of them while served.
	 */
	struct pidtab *walked;
	struct session_mark let_go_mark; /* session_shape when joiner_round's last sweep began */
	size_t let_go_cursor;            /* where the sweep under way is (0: none) */
	bool msprof_key;                 /* --msprof-key: the tree shares one socket path */
	bool standin; /* --host-sys asks dynprof for data: socketless holders join with the stand-in */
};

void joiner_init(struct joiner *j, struct session *s, const struct options *o, bool msprof_key);

/*
 * The tracker of a following mode: every change to `fn` (the processes
 * already running too), its one line of what it uses said. NULL after
 * printing why (also when the session could not get its table).
 */
struct tracker *joiner_tracker_open(const struct options *o, const struct session *s,
				    pm_listener fn, void *ctx);
void joiner_free(struct joiner *j);

/* Remember `pid` in `tab`; a failure (out of memory) is said, with what it costs. */
void joiner_remember(struct pidtab *tab, int pid, const char *cost);

/* p holds a card: it joins when it listens, is no target yet and its join has not failed. */
void joiner_try(struct joiner *j, const struct pm_proc *p);

/*
 * A change the tracker told: a failed join may be worth another try; an
 * exit leaves; a target that exec'd lost its server with its old image.
 */
void joiner_changed(struct joiner *j, enum pm_change what, const struct pm_proc *p);

/*
 * Each round: a joined target the session let go while its process lives
 * is the model's to look at again (its socket may listen for a new join).
 */
void joiner_round(struct joiner *j);

/*
 * A card holder without a socket, seen each round: a while after it was
 * first seen so, say why once (a worker pool's fork is the usual reason).
 */
void joiner_check_socketless(struct joiner *j, const struct pm_proc *p);

#endif /* DYNPROF_JOINER_H */
