/* SPDX-License-Identifier: MIT */
/*
 * Process file descriptors (pidfd_open(2), Linux 5.3), called through
 * syscall() so that no C library support is needed.
 */
#ifndef DYNPROF_PIDFD_H
#define DYNPROF_PIDFD_H

#include <stdbool.h>
#include "shared/compiler.h"

/*
 * A pidfd (O_CLOEXEC by the kernel's default) for process pid: the fd, or
 * -ESRCH (no such process), -EINVAL (pid is a thread, not a thread group
 * leader), -ENOSYS (kernel too old), other negative errno.
 */
int pidfd_of(int pid) DP_MUST_CHECK;

/* true once the pidfd's thread group has exited (a zombie or reaped). */
bool pidfd_exited(int pidfd);

#endif /* DYNPROF_PIDFD_H */
