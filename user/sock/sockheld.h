/* SPDX-License-Identifier: MIT */
/*
 * A server's connections that its own network namespace does not show.
 *
 * The kernel makes the socket a Unix server accepts in the network
 * namespace of the client that connected (unix_stream_connect creates it
 * in the client's netns), not in the listener's. A target in a netns of its
 * own (any container) held by a client on the host, in another container
 * or in a pod has its listener in /proc/<pid>/net/unix and in sock_diag of
 * its netns, but the accepted socket only in the client's, which dynprof
 * cannot name beforehand. The socket is one of the server's fds all the
 * same: each socket fd that its own netns does not account for is looked
 * at through a copy (pidfd_getfd(2), Linux 5.6; the right to ptrace the
 * process: root, or CAP_SYS_PTRACE), never connected to, never read:
 *
 *   - an AF_UNIX socket, not listening, whose address (getsockname) is the
 *     listener's path as /proc/net/unix prints it: accepted from it;
 *   - its client is still there unless it polls POLLHUP, which a Unix
 *     socket gives exactly when it is shut down both ways: what a client's
 *     close (or shutdown(SHUT_RDWR)) does to the server's end. This is the
 *     rule sockstate.h applies through sock_diag (peer 0 or shutdown 3: a
 *     peer reads 0 only once closed, and its close shuts ours both ways).
 *
 * The copy is closed at once; it holds no lock and sends nothing, and a
 * socket the server closes meanwhile ends when the copy does, microseconds
 * later.
 */
#ifndef DYNPROF_SOCKHELD_H
#define DYNPROF_SOCKHELD_H

#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "shared/compiler.h"

/*
 * A Unix address as /proc/net/unix prints it: a path without its NUL, an
 * abstract name as '@' and its bytes with NULs as '@'. `len` is what
 * getsockname returned (it may exceed the struct: cut to it). 0 and the
 * text in out; -ENOENT unnamed; -ENAMETOOLONG when out is too small;
 * -EINVAL not AF_UNIX or a length shorter than the family.
 */
int sockheld_addr_text(const struct sockaddr_un *a, socklen_t len, char *out, size_t outlen) DP_MUST_CHECK;

/* A socket fd of the server's, as its fd table named it. */
struct sockheld_fd {
	int fd;
	unsigned long ino;
};

/* Looked at per server at most: more, and the rest is not (sockheld.c). */
#define SOCKHELD_FDS_MAX 4096

/*
 * Is one of `fds` (socket fds of `pid` that its own netns's rows do not
 * account for) a connection accepted on `path` (the listener's address, as
 * /proc/net/unix prints it) whose client is still there? 1 yes, 0 no;
 * -EPERM/-EACCES not allowed to copy its fds, -ENOSYS kernel too old,
 * -ESRCH gone, other negative errno.
 */
int sockheld_live_client(int pid, const struct sockheld_fd *fds, int n, const char *path) DP_MUST_CHECK;

#endif /* DYNPROF_SOCKHELD_H */
