/* SPDX-License-Identifier: MIT */
/*
 * Connecting to a target's located socket (proc/socklocate.h) and trusting
 * it. Connecting goes through an O_PATH fd of the home, so sun_path's 108
 * bytes never limit the path. After connect, SO_PEERCRED must name the
 * target's process, else nothing is sent. Connect opens the root and the
 * home again and re-checks everything it relies on.
 */
#ifndef DYNPROF_TARGET_SOCKET_H
#define DYNPROF_TARGET_SOCKET_H

#include <stddef.h>

#include "proc/socklocate.h"
#include "shared/compiler.h"

/*
 * Connect to a found socket, non-blocking, and check SO_PEERCRED. When the
 * found name is served by another process or by nobody (-EPERM,
 * -ECONNREFUSED), the other candidate names that exist as sockets are tried
 * in find's order: with a shared DYNAMIC_PROFILING_KEY_PID the last process
 * to start takes the key's path, and CANN falls back to its own pid when
 * that path is busy. The first failure is the one returned. Returns
 * the connected fd (O_NONBLOCK, O_CLOEXEC) or a negative errno, with a
 * short reason in why[] (may be NULL) for every failure:
 *  -EPERM        the peer is not the target (why names the path and the
 *                real owner: pid, comm, uid), or the pid now belongs to
 *                another process than the one found;
 *  -ECONNREFUSED nobody listens (a stale socket file; the target may have
 *                exited without unlinking it);
 *  -ENOENT       the target exited, or its home or socket file vanished;
 *  -ELOOP / -ENOTSOCK  the name is no longer a socket;
 *  -EAGAIN       the listen backlog stayed full for about 1 s;
 *  other negative errno.
 */
int target_socket_connect(const struct sock_location *ts, char *why, size_t whylen) DP_MUST_CHECK;

#endif /* DYNPROF_TARGET_SOCKET_H */
