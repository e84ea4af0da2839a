/* SPDX-License-Identifier: MIT */
/*
 * Rows of /proc/<pid>/net/unix: the AF_UNIX sockets of the process's
 * network namespace, read without touching any of them (connecting to a
 * server to learn its state would take its one client slot).
 *
 * A row, as the kernel prints it (net/unix/af_unix.c, unix_seq_show):
 *
 *   Num       RefCount Protocol Flags    Type St Inode Path
 *   0000000000000000: 00000002 00000000 00010000 0001 01 23456 /root/sock
 *
 * Flags has __SO_ACCEPTCON (0x10000) for a listening socket; St is
 * SS_UNCONNECTED (01) for an unconnected or listening socket, SS_CONNECTED
 * (03) for a connected one, SS_CONNECTING (02) for a connection still
 * queued on a listener and not yet accepted (inode 0: no fd owns it).
 * Path is the address as bound, byte for byte to the end of the line
 * (abstract names start with '@'); a socket that a server accepted
 * carries its listener's address, so a server's connected socket shows
 * the same path as its listening one. Unbound sockets have no path.
 */
#ifndef DYNPROF_NETUNIX_H
#define DYNPROF_NETUNIX_H

#include <stddef.h>

#include "shared/compiler.h"

#define NETUNIX_ACCEPTCON 0x10000UL /* Flags: listening */
#define NETUNIX_SS_UNCONNECTED 1
#define NETUNIX_SS_CONNECTING 2
#define NETUNIX_SS_CONNECTED 3

struct netunix_row {
	unsigned long flags;
	unsigned type;  /* 1 SOCK_STREAM, 2 SOCK_DGRAM, 5 SOCK_SEQPACKET */
	unsigned state; /* St */
	unsigned long inode;
	const char *path; /* into the line; "" when unbound */
	size_t path_len;
};

/*
 * Parse one line (no '\n'; `len` bytes, need not be NUL-terminated).
 * 0, or -EINVAL for the header line and anything malformed.
 */
int netunix_parse_row(const char *line, size_t len, struct netunix_row *row) DP_MUST_CHECK;

/* A listening row: Flags has __SO_ACCEPTCON and St is 01. */
static inline int netunix_is_listener(const struct netunix_row *r)
{
	return (r->flags & NETUNIX_ACCEPTCON) && r->state == NETUNIX_SS_UNCONNECTED;
}

/* One past connection leaves one stale accepted row (CANN 9.x caps at 128 accepts). */
#define NETUNIX_MAX_INODES 160

/* The sockets bound to one path: what netunix_find collects. */
struct netunix_match {
	unsigned long listening[NETUNIX_MAX_INODES]; /* listening rows' inodes */
	int nlistening;
	unsigned long connected[NETUNIX_MAX_INODES]; /* accepted (St 03) rows' inodes */
	int nconnected;
};

/*
 * Read /proc/<pid>/net/unix (opened relative to `piddir`, an fd of
 * /proc/<pid>) and collect the inodes of the rows whose path is exactly
 * `path`: listeners and connected sockets, NETUNIX_MAX_INODES of each at
 * most. Read in fixed chunks, never whole; lines longer than a path can be
 * are skipped. 0 or negative errno (-ESRCH: the process is gone).
 */
int netunix_find(int piddir, const char *path, struct netunix_match *out) DP_MUST_CHECK;

/*
 * Read /proc/<pid>/net/unix (opened relative to `piddir`) and call `fn` for
 * every row; a non-zero return stops the walk and is returned. Lines longer
 * than a row can be are skipped. 0 or negative errno (-ESRCH: gone).
 */
typedef int (*netunix_fn)(void *ctx, const struct netunix_row *r);
int netunix_scan(int piddir, netunix_fn fn, void *ctx) DP_MUST_CHECK;

/*
 * An abstract row's name after '@' when it starts with `prefix` and the
 * rest is a key CANN could have written (1 to 16 characters, none of them
 * '@', blank or control): the key's text and length. 0, or -EINVAL.
 */
int netunix_abstract_key(const struct netunix_row *r, const char *prefix, const char **key,
			 size_t *key_len) DP_MUST_CHECK;

#endif /* DYNPROF_NETUNIX_H */
