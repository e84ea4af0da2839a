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
#include "target/target.h"
#include "shared/compiler.h"

#ifndef SESSION_MAX_TARGETS /* a test build makes it 2 */
#define SESSION_MAX_TARGETS 1024 /* targets of one run (the array never moves) */
#endif

struct session {
	const struct options *opts;
	char output[PATH_MAX]; /* absolute result folder */
	struct discover *disc; /* exit notifications; may be NULL */
	struct target *targets;
	int ntargets;
	int windows;           /* windows opened so far */
	int prof_dirs;         /* PROF_ folders seen after stops */
	bool window_open;      /* `start` given and no `stop` since: joiners start too */
	bool launch;           /* launch mode: targets join and leave as they come */
	int joined;            /* launch mode: targets that joined over the run */
	bool closing;          /* session_shutdown ran: no more joins */
};

/*
 * Resolve --pid, find and trust each socket, connect and hand over the
 * params (in parallel). Prints msprof's warnings per bad pid. Returns the
 * number of connected targets, or a negative errno with the error printed
 * (-EINVAL: an option error, e.g. a non-numeric pid).
 */
int session_open(struct session *s, const struct options *o, const char *output,
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
 * A fresh connection to the target at `index`: QUIT (which also stops an
 * open window: call when none is open), then connect and send the params
 * again; the server's counts (requests, idle) start again. `limit` names
 * the limit avoided ("request", "idle") in the line printed. Each
 * connection uses one of the server's 128 accepts: dynprof warns when
 * few are left. 0, or a negative errno (printed) with the target dropped.
 */
int session_reconnect(struct session *s, int index, const char *limit) DP_MUST_CHECK;

/*
 * Before either of its server's limits is reached (target/server_limits.h),
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
 */
void session_open_launch(struct session *s, const struct options *o, const char *output);
int session_join(struct session *s, int pid, const char *command, uint64_t cards) DP_MUST_CHECK;
bool session_has_target(const struct session *s, int pid);

/* Stop every open window, then quit every live target. */
void session_shutdown(struct session *s);

/* Live targets left. */
int session_live(const struct session *s);

/*
 * Reading one target without reaching into struct target: what the layers
 * above (trigger/, control/) may know of it. `index` is a session index,
 * 0 <= index < session_target_count(s); indexes never move (a target that
 * leaves stays, not live).
 */
int session_target_count(const struct session *s);
int session_target_pid(const struct session *s, int index);
/* The target itself, for what it is (container, command, nspid): read only. */
const struct target *session_target(const struct session *s, int index);
/* Still a target (not dropped). */
bool session_target_live(const struct session *s, int index);
/* A window is open in it (opened by a rule or by the console). */
bool session_target_collecting(const struct session *s, int index);
/* Requests sent on its current connection (the server ends it at its limit, 101 for 9.x). */
int session_target_requests(const struct session *s, int index);
/* The last command's reply: its enum proto_status and wall clock (us, 0: none yet). */
int session_target_last_status(const struct session *s, int index);
int64_t session_target_last_reply_us(const struct session *s, int index);

/*
 * Idle watching between commands: fill pollfds for the live targets (an
 * unsolicited DISCONNECT or a close arrives as POLLIN); returns how many.
 * session_idle_event() handles a pollfd that fired.
 */
int session_idle_pollfds(const struct session *s, struct pollfd *pfds, int max);
void session_idle_event(struct session *s, const struct pollfd *pfd);

/* The process `pid` exited (from discover): drop it as msprof does. */
void session_target_exited(struct session *s, int pid);

void session_close(struct session *s);

#endif /* DYNPROF_SESSION_H */
