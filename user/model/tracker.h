/* SPDX-License-Identifier: MIT */
/*
 * Keeps the process model current: a /proc scan at start, then kernel
 * events (discover.c, tracking mode) applied as they arrive, a rescan when
 * events were lost, and the card users' sockets re-checked regularly.
 * With the cgroup device hook (discover.h) card opens are confirmed from
 * the fds before they count (opencheck.h) and card holders' fds are
 * re-read every TRACKER_CARD_CHECK_MS for closes. Without BPF the netlink process connector (where it can be used) tells
 * forks, execs and exits at once, and polling /proc finds card opens
 * (and everything else when there is no connector).
 *
 * The caller polls tracker_fd() (may be -1) with tracker_timeout_ms() and
 * then calls tracker_tick().
 */
#ifndef DYNPROF_TRACKER_H
#define DYNPROF_TRACKER_H

#include <stdbool.h>
#include <stddef.h>

#include "shared/cards.h"
#include "model/procmodel.h"
#include "shared/compiler.h"

#define TRACKER_POLL_MS \
	200                       /* /proc polling period without BPF (at least:
				 it stretches to 10x the time a scan takes) */
#define TRACKER_SOCKET_MS 100     /* card users' sockets re-checked this often */
#define TRACKER_SOCKET_SLICE_MS 1 /* ... at most about this long at a time (one holder at least) */
#define TRACKER_SOCKET_GAP_MS 2   /* ... with this long between slices for the loop's others */
/*
 * With BPF: card nodes made since looked for this often. A job that makes
 * its own node (the demo, a container's /dev) is joined only after it: at
 * 1 s, a loaded machine let a launched job's console stop come first. A
 * look is a readdir per pattern folder (a /proc scan follows only when the
 * nodes changed).
 */
#define TRACKER_CARD_GLOB_MS 200
#define TRACKER_CARD_CHECK_MS \
	250 /* cgroup device hook (no close events): card holders'
				     fds re-read this often (at least: stretches to 10x a pass) */

struct tracker;

/* How the model is kept current after the first scan. */
enum tracker_mode {
	TRACKER_SCAN_ONCE, /* not at all: callers that read the model once */
	TRACKER_NO_BPF,    /* process connector (if it can be used) and polling */
	TRACKER_BPF,       /* BPF events; TRACKER_NO_BPF when BPF cannot be used */
};

/*
 * Start tracking cards matching `patterns`. NULL with errno set when out of
 * memory or when the first scan of /proc failed. Outside TRACKER_SCAN_ONCE,
 * `*note` says in one line what is used: with BPF, how card opens are seen
 * ("card opens: cgroup device hook", or "card opens: syscall tracepoints
 * (cgroup device hook: <why not>)"); without, why not BPF and whether the
 * process connector is used. NULL for TRACKER_SCAN_ONCE; it lives as
 * long as the tracker. The listener (may be NULL) gets every change after the initial
 * scan (and, with report_initial, for the processes found by it too).
 */
struct tracker *tracker_open(const struct card_patterns *patterns, enum tracker_mode mode,
			     pm_listener listener, void *ctx, bool report_initial, const char **note);
void tracker_close(struct tracker *t);

int tracker_fd(const struct tracker *t);
int tracker_timeout_ms(const struct tracker *t);

/*
 * Events, rescans, polls and socket checks that are due. 0, or a negative
 * errno with one line in `why` (convention 2 of docs/ERRORS.md: the caller
 * prints it) when a step failed: reading events, a rescan after lost
 * events, a poll of /proc, the look for new card nodes. A failed step is
 * tried again (a rescan after lost events stays owed until one works,
 * retried every TRACKER_POLL_MS); a failure is returned once, not again
 * until every step has worked since.
 */
int tracker_tick(struct tracker *t, char *why, size_t whylen) DP_MUST_CHECK;

bool tracker_uses_bpf(const struct tracker *t);
/* Kernel events lost (BPF ring buffer or connector socket full), and the rescans that answered them. */
unsigned long long tracker_lost_events(const struct tracker *t);
unsigned tracker_rescans(const struct tracker *t);
struct procmodel *tracker_model(struct tracker *t);

#endif /* DYNPROF_TRACKER_H */
