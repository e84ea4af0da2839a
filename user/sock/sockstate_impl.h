/* SPDX-License-Identifier: MIT */
/* Private to sockstate.c and sockowned.c: what a process holds on a path. */
#ifndef DYNPROF_SOCKSTATE_IMPL_H
#define DYNPROF_SOCKSTATE_IMPL_H

#include <stdbool.h>

#include "sock/sockheld.h"
#include "sock/sockstate.h"
#include "shared/compiler.h"

/* The target's other socket fds, for the look at other namespaces (sockheld.h). */
struct other_fds {
	struct sockheld_fd fd[SOCKHELD_FDS_MAX];
	int n;
	bool more; /* some were left out */
};

/*
 * What process `pid` holds on `path` (as net/unix shows it): its listener,
 * and with `accepted_too` its accepted sockets and (when `others` is not
 * NULL) its other socket fds. 0, -ESRCH (gone), other negative errno.
 */
int sockstate_owned_scan(int pid, const char *path, struct sock_owned *out,
			 struct other_fds *others, bool accepted_too) DP_MUST_CHECK;

/* A /proc/<pid> folder as an O_PATH fd; -ESRCH when the process is gone. */
int sockstate_open_piddir(int pid) DP_MUST_CHECK;

#endif /* DYNPROF_SOCKSTATE_IMPL_H */
