/* SPDX-License-Identifier: MIT */
/*
 * The process model: one table of the host's processes, fed first by a
 * /proc scan (processes already running, cards already open), then live
 * by kernel events (discover.c, tracking mode) or, without BPF, by
 * polling /proc. For each process: identity (host pid + start time, so a
 * reused pid is never taken for the old process), its NSpid chain, parent,
 * exe and argv, uid and home (in the process's own root), container id,
 * the cards it holds, and its dynamic-profiling socket and that socket's
 * state.
 */
#ifndef DYNPROF_PROCMODEL_H
#define DYNPROF_PROCMODEL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "dynprof/events.h"
#include "model/pm_proc.h"
#include "shared/cards.h"
#include "shared/compiler.h"

/*
 * What changed, for listeners (--list --watch). Every entry's life is
 * EXEC first (it appeared), then any CARD_OPEN / CARD_CLOSE / SOCKET /
 * EXEC, then EXIT: a listener can mirror the table from its calls alone.
 * A new entry that already holds cards or a socket (first seen by a poll,
 * a rescan after lost events, a fork of a card holder) gets EXEC then
 * CARD_OPEN, then SOCKET if it has one: the same calls as when watched
 * live, so polling and BPF modes tell the same story.
 * `p` is the entry after the change (before its removal, for EXIT).
 */
enum pm_change {
	PM_CHANGE_EXEC,       /* a new entry (exec'd, forked, or first seen by a scan),
				or an entry that exec'd (exe or cmdline changed) */
	PM_CHANGE_CARD_OPEN,  /* its cards grew */
	PM_CHANGE_CARD_CLOSE, /* its cards shrank */
	PM_CHANGE_SOCKET,     /* its socket appeared, vanished or changed state */
	PM_CHANGE_EXIT,       /* it exited (the pm_proc is gone after the call) */
};

struct procmodel;

/* Listeners may read the model (get, foreach) but must not change it. */
typedef void (*pm_listener)(void *ctx, enum pm_change what, const struct pm_proc *p);

/*
 * A model recognising cards by `patterns` (copied), with the card nodes
 * that exist now registered by device number (see procmodel_card_devs;
 * registered again at each scan). NULL on ENOMEM (errno set).
 */
struct procmodel *procmodel_new(const struct card_patterns *patterns);
void procmodel_free(struct procmodel *m);

/* Called for every change (may be NULL). */
void procmodel_set_listener(struct procmodel *m, pm_listener fn, void *ctx);

/*
 * Full scan of /proc: adds processes not in the table, drops the ones gone
 * (or whose pid now names another process), re-reads everything of every
 * process (status, stat, comm, exe, cmdline, cgroup, fds) and the sockets
 * of card holders. Zombies count as gone. Used at start-up, after lost
 * events, and as the polling fallback. Returns 0 or negative errno
 * (-ENOMEM; /proc unreadable). Processes dynprof may not read (not root)
 * are listed with what it can read: no exe, no cards.
 */
int procmodel_scan(struct procmodel *m) DP_MUST_CHECK;

/*
 * Apply one kernel event (discover.c tracking mode):
 *  FORK   adds the child: pid, ppid, uid, comm, start (start_ns in clock
 *         ticks), exe/cmdline/container/cards copied from its parent
 *         (a child inherits all fds); not read from /proc (cheap for
 *         fork-heavy workloads) unless it inherited cards;
 *  EXEC   exe (/proc/<pid>/exe, else the event's path), cmdline (the
 *         event's argv), comm, uid; a card holder's fds are read again
 *         (O_CLOEXEC card fds closed at exec);
 *  EXIT   removes it;
 *  CARD_OPEN  sets the card's bit (index: the event's card, else the
 *         registered device number, else the path's number), reads a
 *         process not in the table (or not read yet) from /proc, and
 *         looks for its socket;
 *  CARD_CLOSE reads its fds again, the closed fd left out (another fd may
 *         hold the same card).
 * An event whose start time differs from the entry's names a new process
 * on a reused pid: the old entry exits first (EXIT events for a process
 * not in the table are ignored).
 *
 * A bare event (start_ns 0: the process connector, which gives pids only)
 * matches whatever entry holds its pid. A bare FORK takes uid and comm
 * from the parent too (its start time is read by the next scan); a bare
 * EXEC is read from /proc whole, as a scan would.
 */
void procmodel_apply(struct procmodel *m, const struct dp_event *e);

/*
 * Re-check the sockets of the processes that hold a card: a socket
 * appears some time after the card is opened, and no kernel event tells.
 * Cheap (card users only); call it every 100 ms or so.
 */
void procmodel_refresh_sockets(struct procmodel *m);

/*
 * The same pass in slices: from slot *cursor on, until clock_ms() reaches
 * `until_ms` (at least one holder each call). true when the pass reached
 * the end of the table (*cursor back to 0), false when more remain: with
 * 1000 card users a whole pass takes tens of ms, which would hold up a
 * join (or any other event) for as long. A slice also looks at no more
 * than 256 slots of the table (each a cache miss: with 1000 served a walk
 * of the host's processes held a join 0.1-0.2 ms).
 */
bool procmodel_refresh_sockets_until(struct procmodel *m, size_t *cursor, int64_t until_ms);
#define PROCMODEL_PASS_SLOTS 256

/*
 * A holder whose socket its caller watches itself (a joined target: the
 * session holds a connection to it) is left out of the socket pass and
 * the card holders' pass while `served`; unserved, its socket is looked at
 * in the next slice, its cards in the next pass. With 1000 served
 * targets the pass re-read each one's socket every 1.6 s, a third of the
 * loop's time in slices that each held a join up to 1 ms. Unknown pid:
 * nothing.
 */
void procmodel_set_served(struct procmodel *m, int pid, bool served);

/*
 * A card holder without a socket at its first look is looked at again 2,
 * 4, 8 ... 64 ms later (then the pass has it): its server's socket often
 * comes a moment after its card. procmodel_look_soon looks at those due by
 * `now` (clock_ms); procmodel_soon_next_ms: the next one due, INT64_MAX
 * none.
 */
void procmodel_look_soon(struct procmodel *m, int64_t now);
int64_t procmodel_soon_next_ms(const struct procmodel *m);

/*
 * Re-read the fds of the processes that hold a card, and tell the cards
 * they no longer hold (or newly hold): how closes are found when the
 * kernel side sends no CARD_CLOSE (the cgroup device hook). One
 * /proc/<pid>/fd walk per card holder, in slices as
 * procmodel_refresh_sockets_until (a whole pass over 1000 holders took
 * 36-50 ms of the loop at once). true when the pass reached the end.
 */
bool procmodel_refresh_cards_until(struct procmodel *m, size_t *cursor, int64_t until_ms);

/*
 * An unconfirmed CARD_OPEN (fd == DP_FD_UNCONFIRMED: a device permission
 * check, the open maybe not done yet, maybe failed): applied as a
 * CARD_OPEN only when the process's fds show the card now. 1 applied (or
 * the process was already known to hold the card), 0 not in its fds (yet),
 * -ESRCH the process is gone (or another one has its pid), -EACCES fds not
 * readable, -EINVAL not such an event.
 */
int procmodel_confirm_open(struct procmodel *m, const struct dp_event *ev) DP_MUST_CHECK;

/*
 * Read the fds of `pid` (an entry of the table) again, telling a card
 * open or close the kernel did not report: a node whose device number no
 * host pattern registered (one that exists only inside a container, made
 * there by its engine) is a card by its name alone, and only /proc says
 * it was opened. For the few processes a rule waits on (trigger_cond.c).
 */
void procmodel_recheck_cards(struct procmodel *m, int pid);

/* Look-ups. The pointers stay valid until the next change to the model. */
const struct pm_proc *procmodel_get(const struct procmodel *m, int pid);
void procmodel_foreach(const struct procmodel *m, void (*fn)(void *ctx, const struct pm_proc *p),
		       void *ctx);
/* Entries in the table. */
size_t procmodel_count(const struct procmodel *m);
/* The slots of its table (a pass's cursor runs over these). */
size_t procmodel_slots(const struct procmodel *m);

/*
 * true when `ancestor` is `pid` itself or one of its ancestors, following
 * ppid (as first seen) through the table. The chain stops at a process no
 * longer in the table (an exited middle parent of a double fork), and at a
 * "parent" younger than its child (its pid was reused).
 */
bool procmodel_descends_from(const struct procmodel *m, int pid, int ancestor);

/*
 * Glob the card patterns again (nodes made since: a driver loaded, a
 * program that makes its own node). 1 when the set of card devices
 * changed, 0 when not, or a negative errno.
 */
int procmodel_refresh_card_devs(struct procmodel *m) DP_MUST_CHECK;

/*
 * Card device numbers registered (for discover_add_card): fills up to
 * `max` of devs[i] and index[i]; returns how many (>= 0).
 */
int procmodel_card_devs(const struct procmodel *m, struct dp_card_dev *devs, int *index, int max);

/* The innermost NSpid: the process's pid in its own pid namespace. */
static inline int pm_proc_nspid(const struct pm_proc *p)
{
	return p->nspid[p->nslevels > 0 ? p->nslevels - 1 : 0];
}

#endif /* DYNPROF_PROCMODEL_H */
