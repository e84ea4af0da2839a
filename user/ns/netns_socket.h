/* SPDX-License-Identifier: MIT */
/*
 * A socket made inside a target's network namespace.
 *
 * Abstract unix names (CANN 8.5.0's \0dyn_prof_sock_<key>) and sock_diag
 * queries belong to a network namespace: the one of the socket, fixed when
 * the socket is made. A socket made in the target's netns stays there, so
 * dynprof can connect or query from any thread afterwards.
 *
 * When the target is in dynprof's own netns (same nsfs inode), the socket
 * is made directly. Otherwise a helper does it: a forked child joins the
 * target's netns (setns on /proc/<pid>/ns/net, opened before the fork; if
 * that is refused, the target's user namespace first, as a rootless
 * container's owner may), makes the socket and hands the fd back over a
 * socketpair with SCM_RIGHTS, then exits. setns is per thread and the
 * child has one, so dynprof's own threads never change namespace.
 *
 * The helper is the seed of a per-target helper (a process that works in
 * the target's namespaces with the target's rights): helper_run() in the
 * .c file runs any fd-making step there.
 */
#ifndef DYNPROF_NETNS_SOCKET_H
#define DYNPROF_NETNS_SOCKET_H

#include <stdbool.h>
#include <sys/types.h>

#include "shared/compiler.h"

/* A target's network namespace, as an open nsfs fd and its identity. */
struct netns {
	int fd;        /* /proc/<pid>/ns/net, O_RDONLY|O_CLOEXEC */
	int userns_fd; /* /proc/<pid>/ns/user, or -1 */
	dev_t dev;
	ino_t ino;
	bool ours; /* the same namespace as dynprof's */
};

/*
 * Open the netns of `pid`. 0, or -ESRCH (gone), -EACCES (not allowed to
 * look: another user's process), other negative errno.
 */
int netns_open(int pid, struct netns *ns) DP_MUST_CHECK;
void netns_close(struct netns *ns);

/*
 * socket(domain, type, protocol) inside `ns` (type may carry SOCK_CLOEXEC
 * and SOCK_NONBLOCK; CLOEXEC is always added). The fd, or a negative
 * errno: -EPERM when dynprof may not enter the namespace (it needs
 * CAP_SYS_ADMIN over it), -ETIMEDOUT when the helper did not answer.
 */
int netns_socket(const struct netns *ns, int domain, int type, int protocol) DP_MUST_CHECK;

/* netns_open + netns_socket + netns_close, for one socket. */
int netns_socket_of(int pid, int domain, int type, int protocol) DP_MUST_CHECK;

#endif /* DYNPROF_NETNS_SOCKET_H */
