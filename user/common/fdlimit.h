/* SPDX-License-Identifier: MIT */
/*
 * dynprof's file descriptor limit: one connection per target, so the soft
 * limit (often 1024) is raised to the hard limit at start; an application
 * that dynprof starts gets the limit it would have had without dynprof
 * (programs that use select() need fds below 1024).
 */
#ifndef DYNPROF_FDLIMIT_H
#define DYNPROF_FDLIMIT_H

/* Raise the soft RLIMIT_NOFILE to the hard one, remembering the first. */
void fdlimit_raise(void);

/* In a child before exec: the soft limit as it was before fdlimit_raise. */
void fdlimit_restore(void);

#endif /* DYNPROF_FDLIMIT_H */
