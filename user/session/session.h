/* SPDX-License-Identifier: MIT */
/*
 * A session: the set of targets of one dynprof run, their windows, and
 * commands fanned out to all of them in parallel. Results print per target
 * in the order the user gave the pids, with msprof's lines.
 *
 * Errors: convention 3 of docs/ERRORS.md: session_open, session_join and
 * session_reconnect print the one line themselves; callers only propagate.
 */
#ifndef DYNPROF_SESSION_H
#define DYNPROF_SESSION_H

#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>

#include "kernel/discover.h"
#include "config/options.h"
#include "dynprof/proto.h"
#include "session/session_view.h" /* reading one: whoever drives a session reads it too */
#include "shared/compiler.h"

/*
 * Opaque outside session/ (its members: session/session_impl.h): one is
 * made by session_open, session_open_launch or session_open_follow, driven
 * by the functions below, read through session_view.h, and freed by
 * session_close.
 */
struct session;

/*
 * Resolve --pid, find and trust each socket, connect and hand over the
 * params (in parallel). Prints msprof's warnings per bad pid. Returns the
 * number of connected targets, or a negative errno with the error printed
 * (-EINVAL: an option error, e.g. a non-numeric pid). *sp is the new
 * session whatever the outcome (NULL only when out of memory, -ENOMEM):
 * session_close it.
 */
int session_open(struct session **sp, const struct options *o, const char *output,
		 struct discover *disc) DP_MUST_CHECK;

/* Send a command to every live target at once and print the results. */
void session_command(struct session *s, enum proto_command cmd);

/* The same, to the target at `index` only. */
void session_command_one(struct session *s, int index, enum proto_command cmd);

/*
 * The same, to the live targets whose `which[index]` is set (an array of
 * ntargets). Each target's last_status / last_reply_ms tell the outcome.
 */
void session_command_some(struct session *s, enum proto_command cmd, const bool *which);

/*
 * The same for the console's and --control's selectors (start SEL, stop
 * SEL): as session_command, but to `which` only, the session's own window
 * (what joiners get) left as it is; the windows are recorded as the
 * console's.
 */
void session_command_chosen(struct session *s, enum proto_command cmd, const bool *which);

/*
 * quit SEL: the targets `which` marks have their open windows stopped
 * (accounted as any stop), then get QUIT and leave the session; each is
 * remembered (pid and start time) as dismissed.
 */
void session_dismiss(struct session *s, const bool *which);

/*
 * `pid` is a process that `quit SEL` let go (the same process: its start
 * time is checked, so a reused pid is not): follow mode does not take it
 * again. Entries of processes gone are forgotten as others are added.
 */
bool session_dismissed(const struct session *s, int pid);

/*
 * A fresh connection to the target at `index`: QUIT (which also stops an
 * open window: call when none is open), then connect and send the params
 * again; the server's counts (requests, idle) start again. `limit` names
 * the limit avoided ("request", "idle") in the line printed. Each
 * connection uses one of the server's 128 accepts: dynprof warns when
 * few are left. 0, or a negative errno (printed) with the target dropped.
 */
int session_reconnect(struct session *s, int index, const char *limit) DP_MUST_CHECK;

/*
 * Before either of its server's limits is reached (session/server_limits.h),
 * while no window is open: reconnect the target at `index`. `start_next`:
 * a START is about to be sent (v1 restarts its idle count with it).
 * 0 when kept or reconnected, else session_reconnect's error.
 */
int session_keep_connection(struct session *s, int index, bool start_next) DP_MUST_CHECK;

/* session_keep_connection for every live target, before a START (console, scripts). */
void session_make_room(struct session *s);

/* session_keep_connection for every live target: the idle loops call it each round. */
void session_keepalive(struct session *s);

/* Ms until session_keepalive has work (for a poll timeout), -1: none. */
int64_t session_keepalive_due_ms(const struct session *s);

/*
 * Launch mode: a session that starts empty; session_join() adds a target
 * (found, trusted, connected, given the params) and, when the session's
 * window is open, starts it at once. 0 or a negative errno (printed).
 * *sp is NULL when out of memory (the caller says it); session_close it.
 * session_open_follow: the same in follow mode.
 */
void session_open_launch(struct session **sp, const struct options *o, const char *output);
void session_open_follow(struct session **sp, const struct options *o, const char *output);
int session_join(struct session *s, int pid, const char *command, uint64_t cards) DP_MUST_CHECK;
bool session_has_target(const struct session *s, int pid);

/*
 * The run's last line: targets, windows opened, folders, and how the
 * windows ended (saved, saved incomplete, lost); a window not accounted
 * for is said too.
 */
void session_print_summary(const struct session *s);

/* Stop every open window, then quit every live target. */
void session_shutdown(struct session *s);

/*
 * A layer that keys its own state by index (the trigger engine) holds
 * the slots: a slot is then reused only once it said it is done with the
 * target that left it (session_target_release). Without holders a slot
 * is reused at the next join after its target left.
 */
void session_hold_slots(struct session *s);
void session_target_release(struct session *s, int index);

/*
 * Idle watching between commands: fill pollfds for the live targets (an
 * unsolicited DISCONNECT or a close arrives as POLLIN); returns how many
 * (at most `max`: session_live(s) is always enough).
 * session_idle_event() handles a pollfd that fired.
 */
int session_idle_pollfds(const struct session *s, struct pollfd *pfds, int max);
void session_idle_event(struct session *s, const struct pollfd *pfd);

/* The process `pid` exited (from discover): drop it as msprof does. */
void session_target_exited(struct session *s, int pid);

/* Free the session and all it holds; NULL: nothing. */
void session_close(struct session *s);

#endif /* DYNPROF_SESSION_H */
