/* SPDX-License-Identifier: MIT */
/*
 * One target: a process serving the dynamic-profiling socket, its
 * connection and its window state, and the conversation with it in its
 * wire generation. The session (session.c) drives many targets at once
 * through their `xchg` exchanges.
 *
 * Private to session/ (tools/check-private.sh): the layers above know a
 * target only by its session index, through session/session.h and
 * session/session_view.h.
 */
#ifndef DYNPROF_TARGET_IMPL_H
#define DYNPROF_TARGET_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "dynprof/proto.h"
#include "ns/fshelper.h"
#include "results/winaccount.h"
#include "session/exchange.h"
#include "session/server_limits.h"
#include "session/target_socket.h"

struct collect;

/* A command for one target (session.c's queues): which, for whom, and its number. */
#define TARGET_QUEUE_MAX 8
struct target_command {
	enum proto_command cmd;
	bool by_rule;
	bool collecting_only; /* only if it collects when its turn comes (a STOP of the end) */
	bool waited;          /* queued behind another: a START's room is made when it begins */
	unsigned serial;      /* the session's command_serial */
};

struct target {
	int pid;   /* host pid, as the user gave it */
	int nspid; /* pid in its own namespace: names its PROF_ folders */
	struct sock_location sock;
	bool standin; /* it serves no socket: dynprof's stand-in does (hostdata/standin.h) */
	enum proto_version proto;
	char proto_why[128]; /* how --protocol=auto decided */
	char *params;        /* the params JSON (malloc'd) */
	int fd;              /* -1 when not connected */
	int ep;              /* the epoll set its fd is in (session.c) ... */
	int ep_fd;           /* ... as this fd number; -1: in none */
	bool collecting;     /* a window we opened is open */
	bool dropped;        /* no longer a target */
	bool joined;         /* announced as a target (--events target-join) */
	bool released;       /* dropped, and no layer above needs its slot (session_hold_slots) */
	unsigned serial;     /* which target of the run this is (session_target_serial) */
	struct server_limits limits;   /* what its server allows (server_limits.h) */
	struct server_count count;     /* this connection as the server counts it, and how many */
	int last_status;               /* status of the last command's reply (enum proto_status) */
	unsigned last_command;         /* the session's command_serial when it was last sent one */
	int64_t last_reply_us;         /* wall clock (us) when that reply came */
	struct exchange xchg;          /* the exchange in flight */
	char *prof_seen;               /* PROF_ folder names already reported */
	char *inherited;               /* of those, the unfinished ones found at connect: windows an
				    earlier client left open, reported when a stop ends them */
	char result_inside[PATH_MAX];  /* result_dir as the target sees it */
	char result_host[PATH_MAX];    /* the same folder as dynprof reaches it */
	int result_fd;                 /* >= 0: a folder inside the target's filesystem,
				    whose PROF_ folders dynprof moves to --output
				    (no helper could be made: target_results.h) */
	struct fshelper *fsh;          /* its helper, when its results are in its own filesystem */
	struct collect *collect_head;  /* its windows' collections beside the loop (collect.h), the
				    first running: while there is one, only it uses fsh */
	bool leave_pending;            /* it left while a collection ran: the leave is told after */
	bool in_flight;                /* its xchg is a command beside the loop (session flight) */
	struct target_command sending; /* that command */
	struct target_command queue[TARGET_QUEUE_MAX]; /* those waiting for its reply, oldest first */
	int queued;
	bool handshaking; /* joining: its xchg is its first exchange, a source of the loop */
	/*
	 * Its connection ended and whether its process is exiting is not yet
	 * known (session_depart.c): no command's, no idle watch's; its leave
	 * waits for the exit or depart_by_ms.
	 */
	bool departing;
	int depart_kind;      /* enum depart_kind (session_depart.h) */
	int depart_pidfd;     /* readable once the process exited; -1 none (then /proc is read) */
	int64_t depart_by_ms; /* clock_ms(): past it, not exiting ("disconnect") */
	char leave_reason[32];
	int windows;              /* windows opened in it */
	int64_t window_opened_us; /* wall clock when the open one opened */
	uint64_t start_sent_mono; /* CLOCK_MONOTONIC ns its last START was sent (--host-sys-before) */
	bool window_by_rule; /* the open window is a --window rule's: the rule's record line tells it */
	struct window_account last_window; /* how its last window ended (results/winaccount.h) */
	char container[96];                /* its container's name, else its id (12 hex as docker ps
				    shows it, or runc's); "" on the host (target_origin.h) */
	char command[256];                 /* its command line when it joined */
	/* Who it is, for selectors and status (target_origin_read); unknown: 0 / "". */
	char container_id[80]; /* full id (64 hex, or runc's; "<id>@<uid>" rootless), "" on the host */
	char container_name[96]; /* the engine's name, "" unknown */
	unsigned uid;            /* real uid on the host */
	bool uid_known;
	bool origin_taken; /* from the process model at its join (target_origin_take) */
	uint64_t cards;    /* cards it held when it joined (bit N: card N) */
};

/* Outcome of one exchange, decoded, with a reason when it went wrong. */
struct target_outcome {
	struct proto_reply reply;
	char reason[160]; /* "" when the server answered in protocol */
};

/* Prepare the first exchange: v2 sends the params, v1 its TEST handshake. */
void target_prepare_handshake(struct target *t, int64_t deadline);
void target_finish_handshake(struct target *t, struct target_outcome *out);

/* Prepare a command (v1 START carries the params). */
void target_prepare_command(struct target *t, enum proto_command cmd, int64_t deadline);
void target_finish_command(struct target *t, enum proto_command cmd, int timeout_ms,
			   struct target_outcome *out);

/*
 * Read one unsolicited message from a target that is idle (its fd became
 * readable between commands). Returns the decoded status: DISCONNECTED,
 * or BAD_REPLY with a reason (closed, garbage).
 */
void target_read_unsolicited(struct target *t, struct target_outcome *out);

/*
 * After a DISCONNECT the server still sends its QUIT_RSP (9.x: (6,x);
 * v1: QUIT_RSP), and after a v1 QUIT its DISCONN_RSP "Client request
 * quit." and QUIT_RSP: read up to `count` messages briefly.
 */
void target_drain(struct target *t, int count);

/* How its PROF_ folders are told apart (output_new_prof_dirs): its pid, or v1's names. */
int target_prof_names(const struct target *t);

/* A window is open (or not) from now on: the idle count follows (write collecting only here). */
void target_set_collecting(struct target *t, bool collecting);

/* A fresh connection: its counts start again, one more of the server's accepts used. */
void target_connected(struct target *t);

/* Close the connection (the watchdog's copy first); the target stays as it is. */
void target_close(struct target *t);
void target_unwatch_idle(struct target *t);

/* Close the connection; the target stays in the list, marked dropped. */
void target_drop(struct target *t);
/* How many drops and closes of targets there were so far (never goes back). */
unsigned target_changes(void);

void target_free(struct target *t);
/*
 * The same, its helper's work (the result folder's removal, which its user
 * can hold up by stopping the helper) done on a job of q, beside the loop.
 */
struct offloop;
void target_free_beside(struct target *t, struct offloop *q);

#endif /* DYNPROF_TARGET_IMPL_H */
