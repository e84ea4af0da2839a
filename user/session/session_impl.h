/* SPDX-License-Identifier: MIT */
/*
 * The session's members and the functions only session/ calls. Private to
 * session/ (tools/check-private.sh): the layers above hold a struct session
 * they cannot see into, and read it through session/session.h and
 * session/session_view.h, so a member can change without them.
 */
#ifndef DYNPROF_SESSION_IMPL_H
#define DYNPROF_SESSION_IMPL_H

#include "results/output.h"
#include "session/session.h"
#include "session/target_impl.h"

#ifndef SESSION_FIRST_SLOTS    /* a test build makes it 2, so that the table grows early */
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
	size_t slots;            /* room in `targets` */
	unsigned serial;         /* targets taken in so far: names each slot's target */
	unsigned command_serial; /* commands fanned out so far: which targets the last one reached */
	int slot_holders;        /* layers above that key state by index (session_hold_slots) */
	struct output_listing listing; /* --output's PROF_ names, read once per command */
	int listing_batch;  /* > 0: inside one command; the listing is kept until it ends */
	bool fd_limit_said; /* "out of file descriptors" printed once */
	int windows;        /* windows opened so far */
	int prof_dirs;      /* PROF_ folders seen after stops */
	int saved, incomplete, lost; /* windows ended, by fate (results/winaccount.h) */
	bool window_open;            /* `start` given and no `stop` since: joiners start too */
	bool launch;                 /* launch mode: targets join and leave as they come */
	bool follow;  /* follow mode (launch's joins, host-wide): rules count from each join */
	int joined;   /* launch mode: targets that joined over the run */
	bool closing; /* session_shutdown ran: no more joins */
	/* Targets `quit SEL` let go: never taken again (session_dismissed). */
	struct session_dismissed_proc *dismissed;
	int ndismissed;
	size_t dismissed_cap;
};

/*
 * Inside session/ only (session.c, session_connect.c). One command, or the
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

#endif /* DYNPROF_SESSION_IMPL_H */
