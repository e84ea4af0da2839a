/* SPDX-License-Identifier: MIT */
/*
 * Connecting to a target's located socket (sock/socklocate.h) and trusting
 * it. A connection that is not used ends a CANN server's accept loop for
 * good, so nothing is connected before it is proven to be the target's:
 * a file must be the one the target's own listener is bound to
 * (sockstate_check_file: its listening inode among the target's fds, the
 * listener's UNIX_DIAG_VFS against a stat of the file); an abstract name
 * must be a listener the target holds. A file is connected through an
 * O_PATH fd of the home, so sun_path's 108 bytes never limit the path; an
 * abstract name through a socket made in the target's network namespace
 * (ns/netns_socket.h), with its exact length. After connect, SO_PEERCRED
 * must name the target's process (a race), else the connection is left as
 * target_leave.h does, nothing of the user's is sent. Connect opens the
 * root and the home again and re-checks everything it relies on.
 */
#ifndef DYNPROF_TARGET_SOCKET_H
#define DYNPROF_TARGET_SOCKET_H

#include <stddef.h>

#include "dynprof/proto.h"
#include "sock/socklocate.h"
#include "shared/compiler.h"

/*
 * Connect to a found socket, non-blocking, and check SO_PEERCRED (`proto`
 * is how to leave a connection that turns out not to be the target's). When the
 * found name is served by another process or by nobody (-EPERM,
 * -ECONNREFUSED), the other candidate names that exist as sockets are tried
 * in find's order: with a shared DYNAMIC_PROFILING_KEY_PID the last process
 * to start takes the key's path, and CANN falls back to its own pid when
 * that path is busy. The first failure is the one returned. Returns
 * the connected fd (O_NONBLOCK, O_CLOEXEC) or a negative errno, with a
 * short reason in why[] (may be NULL) for every failure:
 *  -EPERM        the socket is not the target's (why names the path and
 *                the real owner: pid, comm, uid; found without connecting
 *                when sock_diag can tell), or the pid now belongs to
 *                another process than the one found, or its network
 *                namespace cannot be entered (abstract);
 *  -ECONNREFUSED nobody listens, or the target does not (a stale socket
 *                file; the target may have exited without unlinking it);
 *  -ENOENT       the target exited, or its home or socket file vanished;
 *  -ELOOP / -ENOTSOCK  the name is no longer a socket;
 *  -EAGAIN       the listen backlog stayed full for about 1 s;
 *  other negative errno.
 */
int target_socket_connect(const struct sock_location *ts, enum proto_version proto, char *why,
			  size_t whylen) DP_MUST_CHECK;

#endif /* DYNPROF_TARGET_SOCKET_H */
