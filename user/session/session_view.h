/* SPDX-License-Identifier: MIT */
/*
 * The session seen from the layers above (trigger/, control/, cli/), read
 * only. struct session and struct target are opaque outside session/
 * (tools/check-private.sh): what those layers may know of a run and of its
 * targets is what this header gives, so the session can change its members
 * without them.
 *
 * `index` is a session index (a slot), 0 <= index < session_target_count(s);
 * indexes never move (a target that leaves stays, not live, until its slot
 * is reused).
 */
#ifndef DYNPROF_SESSION_VIEW_H
#define DYNPROF_SESSION_VIEW_H

#include <stdbool.h>
#include <stdint.h>

#include "results/winaccount.h"

struct session;

/*
 * The run as `status` shows it, in one call. The string points into the
 * session: good until session_close.
 */
struct session_info {
	const char *output;          /* the absolute result folder (--output) */
	bool window_open;            /* `start` given and no `stop` since: joiners start too */
	int windows;                 /* windows opened so far */
	int saved, incomplete, lost; /* windows ended, by fate (results/winaccount.h) */
};
void session_info(const struct session *s, struct session_info *out);

/* The same facts one at a time, for a reader that needs only one. */
const char *session_output(const struct session *s);
bool session_window_open(const struct session *s);
/* Launch or follow mode: targets join and leave as they come. */
bool session_is_launch(const struct session *s);
/* Follow mode (launch's joins, host-wide): rules count from each join. */
bool session_is_follow(const struct session *s);

/* Live targets left. */
int session_live(const struct session *s);

/*
 * Moves whenever a target is taken in, joins, leaves, departs, begins or
 * ends a command or gets a connection: a pass over every target that
 * looks for such changes need not run while it stays the same.
 */
unsigned session_shape(const struct session *s);

/* A pass's last sight of session_shape (zeroed: never seen). */
struct session_mark {
	unsigned shape;
	bool seen;
};

/* Whether the shape moved since *m last saw it (true the first time); *m sees it now. */
bool session_shape_moved(const struct session *s, struct session_mark *m);

/* Slots so far (live targets and those that left). */
int session_target_count(const struct session *s);

/*
 * Who and what one target is, for status, selectors and the window record,
 * in one call. The strings point into the target: good until the session
 * next changes (a join may reuse the slot of a target that left).
 */
struct session_target_info {
	int pid;                    /* host pid, as the user gave it */
	int nspid;                  /* pid in its own namespace: names its PROF_ folders */
	const char *container;      /* its container's name, else its short id; "" on the host */
	const char *container_id;   /* full id (64 hex, or runc's), "" on the host */
	const char *container_name; /* the engine's name, "" unknown */
	unsigned uid;               /* real uid on the host, when uid_known */
	const char *user_names;     /* ":a:b:" its own passwd's names of its uid, at its join */
	bool uid_known;
	uint64_t cards;      /* cards it held when it joined (bit N: card N) */
	const char *command; /* its command line when it joined */
	int windows;         /* windows opened in it */
	bool host_only;      /* it serves no socket: dynprof's stand-in does (host data only) */
};
/* Fill `out` for the target at `index`; returns `out`, to be used in an expression. */
const struct session_target_info *session_target_info(const struct session *s, int index,
						      struct session_target_info *out);

/*
 * Which target holds the slot: a number no other target of the run has.
 * A launch-mode join may reuse the slot of a target that left: the serial
 * changes then.
 */
unsigned session_target_serial(const struct session *s, int index);
int session_target_pid(const struct session *s, int index);
/* Still a target (not dropped). */
bool session_target_live(const struct session *s, int index);
/* Its join under way (its handshake): neither live nor gone yet. */
bool session_target_joining(const struct session *s, int index);
/* A window is open in it (opened by a rule or by the console). */
bool session_target_collecting(const struct session *s, int index);
/* Requests sent on its current connection (the server ends it at its limit, 101 for 9.x). */
int session_target_requests(const struct session *s, int index);
/* The last command's reply: its enum proto_status and wall clock (us, 0: none yet). */
int session_target_last_status(const struct session *s, int index);
int64_t session_target_last_reply_us(const struct session *s, int index);
/*
 * The last command fanned out (start, stop, quit: by the console, a script,
 * a rule) was sent to it: its last status is that command's answer.
 */
bool session_target_in_last_command(const struct session *s, int index);
/* Commands fanned out so far: a caller sees whether its own reached any target. */
unsigned session_command_serial(const struct session *s);
/* How its last window ended (valid once one has: number > 0). */
const struct window_account *session_target_last_window(const struct session *s, int index);

#endif /* DYNPROF_SESSION_VIEW_H */
