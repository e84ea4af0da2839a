/* SPDX-License-Identifier: MIT */
/*
 * AF_UNIX sockets through sock_diag (NETLINK_SOCK_DIAG, SOCK_DIAG_BY_FAMILY):
 * what /proc/net/unix does not say.
 *
 *  - UNIX_DIAG_VFS: the (inode, device) of the file a listener is bound
 *    to. Compared with a stat of the path it proves that the file is that
 *    listener's, not another process's that took the path over (CANN 9.x
 *    unlinks before bind: the last process with a key owns the path).
 *  - UNIX_DIAG_NAME: the address a socket is bound to (an accepted
 *    socket carries its listener's), so that the few sockets a process
 *    holds are matched to a path one by one, without reading every row of
 *    its namespace's /proc/net/unix (thousands with many targets).
 *  - UNIX_DIAG_PEER and UNIX_DIAG_SHUTDOWN: an accepted socket whose client
 *    closed has peer 0 and shutdown 3 (both directions). CANN 9.x and 8.5.0
 *    never close accepted sockets, so such stale sockets pile up; only one
 *    with a live peer is a client being served.
 *
 * Queries run in a network namespace: the one the netlink socket was made
 * in (netns_socket.h). The parser is pure and takes the kernel's answer as
 * hostile bytes: every header and attribute length is checked.
 *
 * Without sock_diag for AF_UNIX (CONFIG_UNIX_DIAG off, or the unix_diag
 * module not loaded) the queries fail with -EOPNOTSUPP (the kernel answers
 * ENOENT to the family): callers fall back to what /proc/net/unix says.
 */
#ifndef DYNPROF_SOCKDIAG_H
#define DYNPROF_SOCKDIAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "shared/compiler.h"

#define SOCKDIAG_LISTEN 10     /* TCP_LISTEN, as unix_diag reports states */
#define SOCKDIAG_ESTABLISHED 1 /* TCP_ESTABLISHED */
#define SOCKDIAG_SHUTDOWN_BOTH 3

/* The bytes of sun_path an address can have. */
#define SOCKDIAG_NAME_MAX 108

/* One socket as sock_diag describes it; has_* say which attributes came. */
struct sockdiag_rec {
	uint32_t ino;
	uint8_t type;  /* SOCK_STREAM ... */
	uint8_t state; /* SOCKDIAG_LISTEN, SOCKDIAG_ESTABLISHED, ... */
	bool has_vfs, has_peer, has_shutdown, has_name;
	uint32_t vfs_ino;
	uint32_t vfs_dev; /* the kernel's internal dev_t (major << 20 | minor) */
	uint32_t peer;    /* the peer's inode; 0: the peer is gone */
	uint8_t shutdown; /* RCV_SHUTDOWN 1 | SEND_SHUTDOWN 2 */
	uint8_t name_len; /* bytes of name: sun_path as bound (a path's NUL
			     counted, an abstract name's leading NUL too) */
	char name[SOCKDIAG_NAME_MAX];
};

/*
 * The record's address as /proc/net/unix prints it (sockheld_addr_text):
 * 0 and the text; -ENOENT unbound or not asked for; -ENAMETOOLONG.
 */
int sockdiag_name_text(const struct sockdiag_rec *r, char *out, size_t outlen) DP_MUST_CHECK;

/* A stat() st_dev against a UNIX_DIAG_VFS device. */
bool sockdiag_same_dev(uint32_t vfs_dev, dev_t st_dev);

/* An accepted socket with a client still there. */
static inline bool sockdiag_live_peer(const struct sockdiag_rec *r)
{
	return r->has_peer && r->peer != 0 &&
	       !(r->has_shutdown && r->shutdown == SOCKDIAG_SHUTDOWN_BOTH);
}

/*
 * Build a request into buf (at least SOCKDIAG_REQ_LEN bytes): a dump of the
 * sockets in `states` (a mask of 1 << state) when ino is 0, else the one
 * socket `ino`; `show` is a mask of UDIAG_SHOW_*. Returns its length.
 */
#define SOCKDIAG_REQ_LEN 40
size_t sockdiag_build(void *buf, uint32_t ino, uint32_t states, uint32_t show, uint32_t seq);

typedef void (*sockdiag_fn)(void *ctx, const struct sockdiag_rec *r);

/*
 * Parse one datagram of answers to request `seq`: `fn` for every socket.
 * Returns 1 when the answer is complete (NLMSG_DONE, or the single answer
 * to an exact query), 0 when more datagrams follow, a negative errno from
 * an NLMSG_ERROR, or -EBADMSG for malformed bytes.
 */
int sockdiag_parse(const void *buf, size_t len, uint32_t seq, bool exact, sockdiag_fn fn,
		   void *ctx) DP_MUST_CHECK;

/*
 * Send a request on `nlfd` (a NETLINK_SOCK_DIAG socket) and feed every
 * answer to `fn`, within about a second. 0, or a negative errno
 * (-EOPNOTSUPP: no unix_diag; -ENOENT: no socket `ino`).
 */
int sockdiag_query(int nlfd, uint32_t ino, uint32_t states, uint32_t show, sockdiag_fn fn,
		   void *ctx) DP_MUST_CHECK;

/*
 * The one socket `ino` (an exact query): its record into *rec. 0 when the
 * kernel answered with it, -ENOENT when it answered with nothing (no such
 * socket, or no unix_diag: the two look alike), else sockdiag_query's.
 */
int sockdiag_query_one(int nlfd, uint32_t ino, uint32_t show, struct sockdiag_rec *rec) DP_MUST_CHECK;

/*
 * A NETLINK_SOCK_DIAG socket in the netns of `pid`, kept for later calls
 * (a few namespaces are kept, the least recently used one closed first, so
 * a container's namespace is not entered every 100 ms). The fd belongs to
 * the cache: do not close it. Negative errno on failure.
 */
int sockdiag_socket_for(int pid) DP_MUST_CHECK;

/*
 * The first of `inos` (n sockets that a process of the netns of `pid`
 * holds: the caller read them from its fds just now) that listens on
 * `path` (as /proc/net/unix prints it), with its name and bound file
 * (UNIX_DIAG_VFS): 1 and *rec; 0 none of them does; -EOPNOTSUPP no
 * unix_diag; -E2BIG more listeners in the namespace than are kept; other
 * negative errno.
 *
 * From one dump of the namespace's listeners, kept for a second and used
 * for every process asked about meanwhile (1000 targets connected one
 * after the other: one dump, not a walk of the namespace's sockets each),
 * taken again when none of `inos` is in it (a listener younger than the
 * dump). A kept record is true now for a socket the process still holds:
 * a listening socket listens, on the same name and file, until it is
 * closed, and its inode number is not given to another socket within a
 * second (sockfs numbers count up through 2^32).
 */
int sockdiag_find_listener(int pid, const uint32_t *inos, int n, const char *path,
			   struct sockdiag_rec *rec) DP_MUST_CHECK;

/* Forget a cached socket that failed (its namespace may be gone). */
void sockdiag_socket_drop(int fd);

#endif /* DYNPROF_SOCKDIAG_H */
