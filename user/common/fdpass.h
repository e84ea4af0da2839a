/* SPDX-License-Identifier: MIT */
/*
 * One message over a unix socket with an open fd riding along
 * (SCM_RIGHTS): the one place user/ writes and reads that control message
 * (the netns helper's answer, ns/netns_socket.c; the connections the
 * watchdog holds, session/watchdog.c). Only syscalls: usable in a forked
 * child.
 */
#ifndef DYNPROF_FDPASS_H
#define DYNPROF_FDPASS_H

#include <stddef.h>
#include <sys/types.h>

/*
 * sendmsg of `len` bytes, with `fd` attached when it is >= 0; flags as
 * sendmsg's (MSG_NOSIGNAL...). sendmsg's result: the bytes sent, or -1
 * with errno (EINTR and EAGAIN are the caller's to retry).
 */
ssize_t fdpass_send(int sock, const void *data, size_t len, int fd, int flags);

/*
 * recvmsg of at most `len` bytes (flags as recvmsg's; the fd received is
 * close-on-exec). *fd: the fd that came along, -1 when none (any more than
 * one are closed). recvmsg's result.
 */
ssize_t fdpass_recv(int sock, void *data, size_t len, int flags, int *fd);

#endif /* DYNPROF_FDPASS_H */
