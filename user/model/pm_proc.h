/* SPDX-License-Identifier: MIT */
/*
 * One process as the model knows it: the record every reader of the model
 * (selection, listing, triggers, control) takes, in a header of its own so
 * that reading a record does not mean including the model's machinery.
 */
#ifndef DYNPROF_PM_PROC_H
#define DYNPROF_PM_PROC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sock/sockstate.h"

#define PM_MAX_NS 8          /* NSpid levels kept */
#define PM_MAX_CARD_INDEX 63 /* cards are a bitmask of indexes 0..63 */

struct pm_proc {
	int pid;                       /* host pid */
	unsigned long long start_time; /* /proc/<pid>/stat field 22 (clock ticks); 0 unknown */
	int ppid;                      /* host parent pid when first seen (fork, or the
					   first scan): kept when the parent exits and
					   the kernel reparents, so ancestry survives */
	int nspid[PM_MAX_NS];          /* NSpid chain, host first; nspid[nslevels-1] innermost
					   (deeper chains keep the host and innermost levels) */
	int nslevels;                  /* >= 1 */
	uid_t uid;                     /* real uid, as the host sees it */
	char comm[16];
	char exe[256];           /* /proc/<pid>/exe ("" unreadable: kernel thread,
					   another user's process when not root) */
	char cmdline[512];       /* argv joined by spaces, cut to fit ("" kernel thread) */
	char container[80];      /* container id (full 64 hex, or runc/crun's id; rootless
					   podman's "<64 hex>@<uid>"), "" on the host */
	char container_name[96]; /* its name: the engine's (docker, podman), "<namespace>/<pod>"
					   (Kubernetes), runc/crun's id, rootless podman's
					   "<name>@<uid>"; "" unknown */
	uint64_t cards;          /* bit N set: holds card N (indexes above 63 not kept) */
	/*
	 * The socket, for card holders only (a process without cards has
	 * NONE and ""). Never NULL; socket and socket_inside are "" unless
	 * the state is LISTENING or BUSY. Owned by the model,
	 * valid as long as the entry (so only the strings of card holders
	 * take memory: three PATH_MAX arrays per process would cost 12 KiB
	 * each across thousands of processes).
	 */
	const char *socket;        /* as dynprof reaches it: /proc/<pid>/root<home>/<name> */
	const char *socket_inside; /* as the process sees it: <home>/<name> */
	const char *home;          /* its home in its own root ("" not resolved) */
	enum pm_socket_state socket_state;
	int socket_flavour;     /* enum sock_flavour (sock/socklocate.h) unless NONE */
	int64_t socket_read_ms; /* when socket_state was read (clock_ms), 0: never */
	bool complete;          /* false: known from kernel events only (a fork
					   not read from /proc yet: nspid holds the host
					   pid alone, container and exe are the parent's).
					   Card holders are read at once. */
};

#endif /* DYNPROF_PM_PROC_H */
