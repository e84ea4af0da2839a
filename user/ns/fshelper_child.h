/* SPDX-License-Identifier: MIT */
/* The per-target helper's own side (fshelper.h); only fshelper.c calls it. */
#ifndef DYNPROF_FSHELPER_CHILD_H
#define DYNPROF_FSHELPER_CHILD_H

#include <sys/types.h>

#include "proc/procfs.h"

/* What the child needs, all opened by dynprof before the clone. */
struct fsh_setup {
	int chan;                /* its end of the socketpair */
	int userns_fd, mntns_fd; /* the target's namespaces, -1 when they are dynprof's own */
	int root_fd;             /* /proc/<pid>/root, O_PATH */
	int null_fd;             /* /dev/null, for 0-2 */
	struct proc_creds creds; /* the target's, as its user namespace numbers them */
};

/* Never returns: sets up, answers READY, serves until the channel closes. */
void fshelper_child_main(const struct fsh_setup *s, int parent) __attribute__((noreturn));

#endif /* DYNPROF_FSHELPER_CHILD_H */
