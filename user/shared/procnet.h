/* SPDX-License-Identifier: MIT */
/*
 * The /proc text the disk and network samples read (hostsample.c): the
 * target's /proc/<pid>/io and its network namespace's /proc/<pid>/net/dev.
 * The kernel writes both, but interface names are chosen by whoever holds
 * CAP_NET_ADMIN in the target's namespace: each line is checked whole and
 * a line that is not what is expected is refused, never half read.
 */
#ifndef DYNPROF_PROCNET_H
#define DYNPROF_PROCNET_H

#include <stddef.h>
#include <stdint.h>

#include "shared/compiler.h"

/* The numbers of one /proc/net/dev interface line: rx bytes [0] ... tx bytes [8] ... */
#define HOSTPROC_NETDEV_NUMS 16

struct hostproc_netdev {
	char name[16]; /* IFNAMSIZ: at most 15 characters and the NUL */
	uint64_t v[HOSTPROC_NETDEV_NUMS];
};

/*
 * read_bytes and write_bytes of /proc/<pid>/io's text (len bytes, no NUL
 * needed). -EINVAL: either is missing, repeated, or not a decimal that
 * fits 64 bits.
 */
int hostproc_parse_io(const char *text, size_t len, uint64_t *read_bytes,
		      uint64_t *write_bytes) DP_MUST_CHECK;

/*
 * One line of /proc/net/dev (len bytes, without its newline): blanks,
 * a name of 1-15 printable characters without ':', then ':' and 16
 * decimals (more are ignored, as a later kernel may add some). -EINVAL
 * for anything else, such as the two header lines.
 */
int hostproc_parse_netdev(const char *line, size_t len, struct hostproc_netdev *d) DP_MUST_CHECK;

#endif /* DYNPROF_PROCNET_H */
