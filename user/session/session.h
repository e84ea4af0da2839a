/* SPDX-License-Identifier: MIT */
/*
 * A session: the set of targets of one dynprof run, their windows, and
 * commands fanned out to all of them in parallel. Results print per target
 * as each reply comes (those of one round in the order the user gave the
 * pids), with msprof's lines.
 *
 * Errors: convention 3 of docs/ERRORS.md: session_open, session_join and
 * a reconnect print the one line themselves; callers only propagate.
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
#include "model/pm_proc.h"
#include "sock/socklocate.h"
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

/* Send a command to every live target at once; each result is printed when its reply came. */
void session_command(struct session *s, enum proto_command cmd);

/* The same, to the target at `index` only. */
void session_command_one(struct session *s, int index, enum proto_command cmd);

/*
 * The same for a rule, to the live targets whose `which[index]` is set (an
 * array of ntargets). Each reply, when it came, is told to the function
 * session_on_reply gave (the rules' engine): then the target's
 * last_status / last_reply_us tell the outcome. A target that left before
 * its reply is told nothing (its exit is).
 */
void session_command_some(struct session *s, enum proto_command cmd, const bool *which);
void session_on_reply(struct session *s, void (*fn)(void *ctx, int index, enum proto_command cmd),
		      void *ctx);

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
 * Before either of its server's limits is reached (session/server_limits.h),
 * while no window is open: a fresh connection to the target at `index`,
 * beside the loop (session_reconnect.c): QUIT first in its queue (which
 * also stops an open window: none is), then connect and send the params
 * again; the server's counts (requests, idle) start again, its commands
 * wait meanwhile. `start_next`: a START is about to be sent (v1 restarts
 * its idle count with it). Each connection uses one of the server's 128
 * accepts: dynprof warns when few are left. A failed reconnect is printed
 * and drops the target. 0 (kept for the API: nothing is dropped at once).
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
 * window is open, starts it at once. It returns at once: 0 when the join
 * is under way (its outcome reaches the function session_on_join gave,
 * joined or not, printed), else a negative errno (printed). The part that
 * may wait on the target runs beside the loop (a job, session_jobs_*),
 * its handshake is a source of the loop (session_join_*: room, pollfds,
 * timeout; stepped every round). session_has_target counts joins under
 * way. *sp is NULL when out of memory (the caller says it); session_close
 * it. session_open_follow: the same in follow mode.
 */
void session_open_launch(struct session **sp, const struct options *o, const char *output);
void session_open_follow(struct session **sp, const struct options *o, const char *output);
int session_join(struct session *s, int pid, const char *command, uint64_t cards) DP_MUST_CHECK;
/*
 * The same with its socket located just now (sockstate_last_listener): not
 * looked up again; origin (NULL: read at its handshake's end): the model's
 * read of the process, for its container, command and uid.
 */
int session_join_found(struct session *s, int pid, const char *command, uint64_t cards,
		       const struct sock_location *found, const struct pm_proc *origin) DP_MUST_CHECK;
/*
 * The same for a card holder that serves no socket: with --host-sys asking
 * dynprof for data it joins with dynprof's stand-in server (host-only
 * windows, hostdata/standin.h); else, or if it serves one by then, as
 * session_join.
 */
int session_join_socketless(struct session *s, int pid, const char *command, uint64_t cards) DP_MUST_CHECK;
void session_on_join(struct session *s, void (*fn)(void *ctx, int pid, int rc), void *ctx);
bool session_has_target(const struct session *s, int pid);
int session_join_room(const struct session *s);
int session_join_pollfds(const struct session *s, struct pollfd *pfds, int max);
void session_join_step(struct session *s);
int64_t session_join_timeout_ms(const struct session *s);

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
 * is reused at the next join after its target left. A holder may let
 * go of a target before the session dropped it (one departing).
 */
void session_hold_slots(struct session *s);
void session_target_release(struct session *s, int index);

/*
 * Idle watching between commands: fill pollfds for the live targets (an
 * unsolicited DISCONNECT or a close arrives as POLLIN); returns how many
 * (at most `max`: session_live(s) is always enough). Usually one: an epoll
 * set holding every idle target's connection (a round costs one fd, not
 * one per target); each target's own when no set can be made.
 * session_idle_event() handles a pollfd that fired.
 */
int session_idle_pollfds(struct session *s, struct pollfd *pfds, int max);
void session_idle_event(struct session *s, const struct pollfd *pfd);

/*
 * Windows whose folders are in a target's own filesystem are brought out
 * beside the loop (session/collect.h): the loop polls session_jobs_fd (-1
 * before the first) and calls session_jobs_event when it is readable,
 * which gives each such window its fate. session_settled: every target
 * the command numbered `serial` reached has its window's fate (a reply to
 * that command may be written); session_target_settled: the same for the
 * target at `index`.
 */
int session_jobs_fd(const struct session *s);
/*
 * Every start/stop/quit goes out beside the loop, each target's commands
 * in its own queue (one exchange at a time each, the next when its reply
 * came): the exchanges under way are polled (room, pollfds, timeout: a
 * ready fd only wakes the loop) and stepped by session_flight_step every
 * round (their deadlines too), each reply applied when it came;
 * session_settled says so to a waiting reply. One hung target delays only
 * its own commands.
 */
int session_flight_room(const struct session *s);
int session_flight_pollfds(const struct session *s, struct pollfd *pfds, int max);
void session_flight_step(struct session *s);
int64_t session_flight_timeout_ms(const struct session *s);
int session_jobs_pending(struct session *s); /* collections not yet ended */
void session_jobs_event(struct session *s);
bool session_settled(const struct session *s, unsigned serial);
/* Every target the command numbered serial went to has replied (or failed), copies aside. */
bool session_replied(const struct session *s, unsigned serial);
bool session_target_settled(const struct session *s, int index);

/*
 * A target whose connection ended leaves as "exit" when its process is
 * gone within 200 ms (its exit path has then finished its window's
 * folder), else as "disconnect". That wait is a source of the loop, not a
 * sleep in it (with jobs coming and going, a 5 ms sleep per exit held
 * every other target's join): the departing targets' pidfds (room,
 * pollfds, event: gone), their deadlines (timeout; the round settles
 * those past it). session_jobs_pending counts them: a run does not end
 * before they left.
 */
int session_depart_room(const struct session *s);
int session_depart_pollfds(const struct session *s, struct pollfd *pfds, int max);
void session_depart_event(struct session *s, const struct pollfd *pfd);
void session_depart_step(struct session *s);
int64_t session_depart_timeout_ms(const struct session *s);

/* The process `pid` exited (from discover): drop it as msprof does. */
void session_target_exited(struct session *s, int pid);

/* Free the session and all it holds; NULL: nothing. */
void session_close(struct session *s);

#endif /* DYNPROF_SESSION_H */
