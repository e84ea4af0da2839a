/* SPDX-License-Identifier: MIT */
/*
 * The pids an attach-mode watcher watches (discover's back ends): an
 * unordered table, each entry with the moment its watch began, so an exit
 * from before it (an earlier process with the same pid) can be told apart,
 * and an optional fd the owner keeps with it. Knows nothing of BPF.
 */
#ifndef DYNPROF_WATCHSET_H
#define DYNPROF_WATCHSET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "shared/compiler.h"

struct watch {
	int pid;
	int pidfd;         /* the owner's fd for this pid, or -1 */
	uint64_t since_ns; /* CLOCK_MONOTONIC (bpf_ktime_get_ns's clock) at watchset_add */
};

/* Zero-initialised is empty. */
struct watchset {
	struct watch *w;
	size_t n, cap;
};

/* The index of pid's entry, or -1. */
ssize_t watchset_find(const struct watchset *s, int pid);

/*
 * Append pid (not checked for presence: see watchset_find), watched from
 * now, with pidfd (or -1). 0, -ENOSPC (DP_MAX_WATCHED entries), -ENOMEM.
 */
int watchset_add(struct watchset *s, int pid, int pidfd) DP_MUST_CHECK;

/* Remove entry i; the last entry takes its place. Its fd stays open. */
void watchset_remove(struct watchset *s, size_t i);

/* Free the table (fds stay open: close them before) and make s empty. */
void watchset_free(struct watchset *s);

#endif /* DYNPROF_WATCHSET_H */
