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
#include "results/output.h"
#include "session/target.h"
#include "shared/compiler.h"

#ifndef SESSION_FIRST_SLOTS /* a test build makes it 2, so that the table grows early */
#define SESSION_FIRST_SLOTS 16 /* slots of a new table; it doubles as targets come */
#endif

struct session {
	const struct options *opts;
	char output[PATH_MAX]; /* absolute result folder */
	struct discover *disc; /* exit notifications; may be NULL */
	/*
	 * Slots [ntargets], each target allocated alone: the table grows
	 * (doubling) and a target never moves, so a pointer to one stays
	 * good until session_close. Launch mode reuses the slot of a target
	 * that left (see session_hold_slots).
	 */
	struct target **targets;
	int ntargets;
	size_t slots;          /* room in `targets` */
	unsigned serial;       /* targets taken in so far: names each slot's target */
	int slot_holders;      /* layers above that key state by index (session_hold_slots) */
	struct output_listing listing; /* --output's PROF_ names, read once per command */
	int listing_batch;     /* > 0: inside one command; the listing is kept until it ends */
	bool fd_limit_said;    /* "out of file descriptors" printed once */
	int windows;           /* windows opened so far */
	int prof_dirs;         /* PROF_ folders seen after stops */
	int saved, incomplete, lost; /* windows ended, by fate (results/winaccount.h) */
	bool window_open;      /* `start` given and no `stop` since: joiners start too */
	bool launch;           /* launch mode: targets join and leave as they come */
	bool follow;           /* follow mode (launch's joins, host-wide): rules count from each join */
	int joined;            /* launch mode: targets that joined over the run */
	bool closing;          /* session_shutdown ran: no more joins */
	/* Targets `quit SEL` let go: never taken again (session_dismissed). */
	struct session_dismissed_proc *dismissed;
	int ndismissed;
	size_t dismissed_cap;
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
 */
void session_open_launch(struct session *s, const struct options *o, const char *output);
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

/* Live targets left. */
int session_live(const struct session *s);

/*
 * Reading one target without reaching into struct target: what the layers
 * above (trigger/, control/) may know of it. `index` is a session index
 * (a slot), 0 <= index < session_target_count(s); indexes never move (a
 * target that leaves stays, not live, until its slot is reused).
 */
int session_target_count(const struct session *s);
/*
 * Which target holds the slot: a number no other target of the run has.
 * A launch-mode join may reuse the slot of a target that left: the serial
 * changes then.
 */
unsigned session_target_serial(const struct session *s, int index);
/*
 * A layer that keys its own state by index (the trigger engine) holds
 * the slots: a slot is then reused only once it said it is done with the
 * target that left it (session_target_release). Without holders a slot
 * is reused at the next join after its target left.
 */
void session_hold_slots(struct session *s);
void session_target_release(struct session *s, int index);
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
/* How its last window ended (valid once one has: number > 0). */
const struct window_account *session_target_last_window(const struct session *s, int index);

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

void session_close(struct session *s);

/*
 * Inside target/ only (session.c, session_connect.c). One command, or the
 * connecting of all targets, is a batch: --output is listed once in it
 * (at its first look) however many targets look, and listed afresh in the
 * next. Batches nest. session_scan_prof_dirs is output_new_prof_dirs for
 * target `t` in its result folder: through the batch's listing when that
 * folder is --output.
 */
void session_batch_begin(struct session *s);
/* session_dismiss.c: remember `pid` (alive now) as dismissed; free the set at close. */
void session_remember_dismissed(struct session *s, int pid);
void session_forget_dismissed(struct session *s);
void session_batch_end(struct session *s);
int session_scan_prof_dirs(struct session *s, struct target *t,
			   void (*found)(void *ctx, const char *name), void *ctx) DP_MUST_CHECK;

#endif /* DYNPROF_SESSION_H */
