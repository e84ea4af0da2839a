/* SPDX-License-Identifier: MIT */
/*
 * The session's members and the functions only session/ calls. Private to
 * session/ (tools/check-private.sh): the layers above hold a struct session
 * they cannot see into, and read it through session/session.h and
 * session/session_view.h, so a member can change without them.
 */
#ifndef DYNPROF_SESSION_IMPL_H
#define DYNPROF_SESSION_IMPL_H

#include "common/offloop.h"
#include "common/pidtab.h"
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
	struct offloop jobs; /* windows' collections beside the loop (collect.h) */
	/*
	 * The idle targets' connections in one epoll set (session.c), so a
	 * round of the loop polls one fd for them, not one each: with 1000
	 * targets, poll() over their sockets was a third of dynprof's time.
	 */
	int idle_ep;
	bool idle_ep_made;
	/*
	 * session_keepalive's last walk of every connection (clock_ms, 0: to
	 * be made) and the soonest reconnect it found (clock_ms, -1 none).
	 */
	int64_t keepalive_at, keepalive_due;
	/* session_keep_connection (session_reconnect.c), before a START that waited */
	int (*keep_connection)(struct session *s, int index, bool start_next);
	/* A rule's command replied (session_on_reply): the engine's. */
	void (*on_reply)(void *ctx, int index, enum proto_command cmd);
	void *on_reply_ctx;
	/*
	 * Joins under way (session_join.c): first beside the loop (finding
	 * the socket, the helper, the result folder, the connect), then their
	 * handshake as a source of the loop (handshakes: how many targets are
	 * in it). join_told hears each join's outcome.
	 */
	struct join_job *joining;
	int handshakes;
	/*
	 * The slots of those handshakes (session_join.c), so that the join's
	 * passes each round (its fds, timeout, step) and every exit's look
	 * see them only: with 1000 targets served they walked every target,
	 * three times a round while a join waited for its reply. hs_lost: the
	 * list could not grow (no memory): every slot is walked until none is
	 * handshaking.
	 */
	int *hs;
	size_t nhs, hscap;
	bool hs_lost;
	int departures; /* targets departing (session_depart.c) */
	/* session.c's, given with the first departure: what a settled one does (no cycle of objects) */
	void (*departed)(struct session *s, struct target *t, int kind, bool gone);
	void (*join_told)(void *ctx, int pid, int rc);
	void *join_ctx;
	/*
	 * session_join.c's, for session.c below it (launch and follow mode):
	 * a joining target's process exited (true: it was joining; its join
	 * ends without a word); the run ends (handshakes under way brought
	 * home, each under its 1 s, so that each joined one is quit).
	 */
	bool (*join_exited)(struct session *s, int pid);
	void (*join_finish)(struct session *s);
	/*
	 * pid -> the slot last given that pid (session_index_target), so that
	 * session_has_target, asked for every card holder every round, is no
	 * walk of the table (with 1000 targets served it was 6% of the
	 * monitor's time). A slot reused since holds another pid or is
	 * dropped: checked at each look. index_incomplete: a put failed (no
	 * memory), the walk is used instead.
	 */
	struct pidtab bypid;
	bool index_incomplete;
	/*
	 * The per-round passes over every target (session_live, the idle
	 * set, the trigger engine's) ran in every round of the loop: with
	 * 1000 targets served a round's work was 0.25-1 ms, and a join waits
	 * through several rounds. shape counts the changes those passes look
	 * for (a slot given, a handshake, a command in flight, a departure, a
	 * connection made; drops and closes are
	 * target_changes()): a pass is made again
	 * only when session_shape moved. flights: targets with a command in
	 * flight; live: session_live's count at live_mark.
	 */
	unsigned shape;
	struct session_mark live_mark, idle_mark;
	int reuse_from;  /* session_new_slot's walk for a free slot starts here */
	int last_slot;   /* the index session_new_slot gave last */
	int settle_hint; /* session_settled's last unsettled target, looked at first */
	int flights, live;
};

/* A target's state that the per-round passes read changed (see shape above). */
static inline void session_shape_changed(struct session *s)
{
	s->shape++;
}

/* The slot `t` now serves t->pid (session_has_target's index). */
void session_index_target(struct session *s, struct target *t);

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

/* session_connect.c, for session_join.c: the steps of connecting one target. */
struct target *session_new_slot(struct session *s, bool reuse);
void session_fd_shortage(struct session *s, int rc);
/*
 * A target whose process serves no socket taken with dynprof's stand-in
 * (hostdata/standin.h) when --host-sys asks dynprof for data; said. 0, or
 * -ENOENT when it is not to be (then nothing was said).
 */
int session_stand_in(const struct session *s, struct target *t) DP_MUST_CHECK;
/* What may wait on the target (its helper, its socket); thread-safe: a join runs it beside the loop. */
int session_connect_prepare(const struct session *s, struct target *t, int *shortage) DP_MUST_CHECK;
void session_connect_complete(struct session *s, struct target *t);
void session_handshake_begin(struct target *t);
/* QUIT on the old connection, its replies read (within timeout_ms), the connection closed; the server keeps running. */
void session_quit_connection(struct session *s, struct target *t, int timeout_ms);
/* The target's next queued command begun, if it has none under way (session.c). */
void session_pump(struct session *s, int index);

void session_finish_handshake(struct session *s, struct target *t);
void session_params_forget(void);
/* session.c, for session_join.c: a START for a target that joined while the window is open. */
void session_start_joined(struct session *s, int index);

/*
 * A target whose connection ended (session_depart.c): session_depart
 * takes it out of every command and watch until its process is known to
 * exit or not, then `departed` (session.c's) says what `kind` asks and
 * lets it leave. DEPART_SAID: the reason was printed already (a v1
 * server's own words, the request limit); DEPART_DISCONNECT: a DISCONNECT
 * without a reason, said once it is known; DEPART_LOST: a plain close.
 */
enum depart_kind { DEPART_SAID, DEPART_DISCONNECT, DEPART_LOST };
void session_depart(struct session *s, struct target *t, enum depart_kind kind,
		    void (*departed)(struct session *s, struct target *t, int kind, bool gone));
/* Its exit event came: it leaves as "exit" now. */
void session_depart_gone(struct session *s, struct target *t);
/* The run's end: every departing target settled, waiting at most its 200 ms. */
void session_depart_finish(struct session *s);

/* A connection's state changed (a reply, a join, a window, a leave): the next keepalive walks. */
static inline void session_keepalive_changed(struct session *s)
{
	s->keepalive_at = 0;
}

#endif /* DYNPROF_SESSION_IMPL_H */
