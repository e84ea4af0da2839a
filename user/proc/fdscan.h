/* SPDX-License-Identifier: MIT */
/*
 * The open files of a process: each entry of /proc/<pid>/fd with its link
 * text ("/dev/davinci0", "socket:[1234]", "pipe:[5678]", ...). Reading
 * another user's fds needs root (or the same uid and ptrace access).
 */
#ifndef DYNPROF_FDSCAN_H
#define DYNPROF_FDSCAN_H

#include "shared/compiler.h"

/* Entries visited at most per process (the kernel's default nr_open). */
#define FDSCAN_MAX (1 << 20)

/*
 * Called per fd: `fddir` is an fd of /proc/<pid>/fd (for fstatat of
 * `name`, which follows the link to the open file), `fd` the number,
 * `target` the link text. A non-zero return stops the walk and is returned.
 */
typedef int (*fdscan_fn)(void *ctx, int fddir, const char *name, int fd, const char *target);

/*
 * Walk the fds of the process whose /proc folder is open as `piddir`.
 * 0 (or the callback's stop value); -ESRCH: gone; -EACCES: not allowed.
 * Entries that vanish during the walk are skipped.
 */
int fdscan(int piddir, fdscan_fn fn, void *ctx) DP_MUST_CHECK;

/* The inode of a "socket:[N]" link text, or 0. */
unsigned long fdscan_socket_inode(const char *target);

#endif /* DYNPROF_FDSCAN_H */
