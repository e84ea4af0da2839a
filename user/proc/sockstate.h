/* SPDX-License-Identifier: MIT */
/*
 * The state of a card holder's dynamic-profiling socket, read without
 * connecting to it.
 *
 * The socket file is found as attach finds it (socklocate_find: the
 * process's key, its home in its own root, both names). Then, matched by
 * inode between /proc/<pid>/net/unix (the sockets of the process's network
 * namespace) and the process's own fds ("socket:[INODE]"), among the rows
 * whose path is the socket's path as the process sees it:
 *
 *   LISTENING  the process owns a listening row (__SO_ACCEPTCON, St 01);
 *   BUSY       and it also owns a connected row (St 03): a server's
 *              accepted socket carries its listener's path, so this is a
 *              client being served (CANN serves one at a time);
 *   NONE       otherwise: no socket file, one that cannot be looked at,
 *              or a file the process owns no listening row for (not
 *              listening yet, left by an earlier process with the same
 *              key, or taken over by another process); path stays "".
 *
 * A client still queued on the listener (St 02, not accepted) is not owned
 * by anyone yet and does not count.
 */
#ifndef DYNPROF_SOCKSTATE_H
#define DYNPROF_SOCKSTATE_H

#include <limits.h>

#include "proc/procmodel.h"
#include "shared/compiler.h"

struct sockstate {
	enum pm_socket_state state;
	char home[PATH_MAX];   /* as the process sees it, "" not resolved */
	char path[PATH_MAX];   /* as the process sees it; "" when NONE */
	char host_path[PATH_MAX]; /* as dynprof reaches it; "" when NONE */
};

/*
 * Find and classify the socket of `pid`. 0 with *out filled (state NONE
 * included); -ESRCH: the process is gone; other negative errno when its
 * socket table or fds could not be read (state then unknown).
 */
int sockstate_read(int pid, struct sockstate *out) DP_MUST_CHECK;

#endif /* DYNPROF_SOCKSTATE_H */
