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
#include <stdint.h>
#include <sys/types.h>

#include "dynprof/cards.h"
#include "dynprof/events.h"

#define PM_MAX_NS 8         /* NSpid levels kept */
#define PM_MAX_CARD_INDEX 63 /* cards are a bitmask of indexes 0..63 */

enum pm_socket_state {
	PM_SOCKET_NONE,      /* no socket file for this process */
	PM_SOCKET_LISTENING, /* the process listens on it, no client connected */
	PM_SOCKET_BUSY,      /* the process listens on it and a client is connected */
};

struct pm_proc {
	int pid;                        /* host pid */
	unsigned long long start_time;  /* /proc/<pid>/stat field 22 (clock ticks) */
	int ppid;                       /* host parent pid */
	int nspid[PM_MAX_NS];           /* NSpid chain, host first; nspid[nslevels-1] innermost */
	int nslevels;
	uid_t uid;
	char comm[16];
	char exe[256];
	char cmdline[512];              /* argv joined by spaces, cut to fit */
	char container[72];             /* container id, "" on the host */
	uint64_t cards;                 /* bit N set: holds card N */
	char socket[PATH_MAX];          /* socket path as dynprof reaches it, "" none */
	char socket_inside[PATH_MAX];   /* the same path as the process sees it */
	enum pm_socket_state socket_state;
};

/* What changed, for listeners (--list --watch). */
enum pm_change {
	PM_CHANGE_EXEC,      /* a process exec'd (or was first seen running) */
	PM_CHANGE_CARD_OPEN, /* its cards grew */
	PM_CHANGE_CARD_CLOSE,/* its cards shrank */
	PM_CHANGE_SOCKET,    /* its socket appeared, vanished or changed state */
	PM_CHANGE_EXIT,      /* it exited (the pm_proc is gone after the call) */
};

struct procmodel;

typedef void (*pm_listener)(void *ctx, enum pm_change what, const struct pm_proc *p);

/* A model recognising cards by `patterns` (copied). NULL on ENOMEM. */
struct procmodel *procmodel_new(const struct card_patterns *patterns);
void procmodel_free(struct procmodel *m);

/* Called for every change (may be NULL). */
void procmodel_set_listener(struct procmodel *m, pm_listener fn, void *ctx);

/*
 * Full scan of /proc: adds processes not in the table, drops the ones gone
 * (or whose pid now names another process), re-reads the cards and sockets
 * of every process. Used at start-up, after lost events, and as the
 * polling fallback. Returns 0 or negative errno.
 */
int procmodel_scan(struct procmodel *m);

/* Apply one kernel event (discover.c tracking mode). */
void procmodel_apply(struct procmodel *m, const struct dp_event *e);

/*
 * Re-check the sockets of the processes that hold a card: a socket
 * appears some time after the card is opened, and no kernel event tells.
 * Cheap (card users only); call it every 100 ms or so.
 */
void procmodel_refresh_sockets(struct procmodel *m);

/* Look-ups. The pointers stay valid until the next change to the model. */
const struct pm_proc *procmodel_get(const struct procmodel *m, int pid);
void procmodel_foreach(const struct procmodel *m,
		       void (*fn)(void *ctx, const struct pm_proc *p), void *ctx);

/* true when `ancestor` is `pid` itself or one of its ancestors. */
bool procmodel_descends_from(const struct procmodel *m, int pid, int ancestor);

/* Card device numbers found for the patterns (for discover_add_card). */
int procmodel_card_devs(const struct procmodel *m, struct dp_card_dev *devs, int *index, int max);

/* Pure helpers, for unit tests. */
/* Container id from /proc/<pid>/cgroup text (docker, containerd, cri-o, podman, kubepods); "" when none. */
void procmodel_container_id(const char *cgroup_text, char *id, size_t len);

#endif /* DYNPROF_PROCMODEL_H */
