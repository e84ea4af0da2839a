/* SPDX-License-Identifier: MIT */
/*
 * A map from pid (> 0) to a pointer: open addressing with linear probing,
 * capacity a power of two kept at most half full, deletion by backward
 * shift (no tombstones, so a long-running watcher over millions of
 * short-lived pids never degrades). Thousands of processes, O(1) each.
 *
 * The map stores pointers only; it never owns what they point to.
 */
#ifndef DYNPROF_PIDTAB_H
#define DYNPROF_PIDTAB_H

#include <stddef.h>

#include "shared/compiler.h"

struct pidtab_slot {
	int pid; /* 0: empty */
	void *val;
};

struct pidtab {
	struct pidtab_slot *slots;
	size_t cap; /* power of two, 0 before the first insert */
	size_t count;
};

void pidtab_init(struct pidtab *t);
void pidtab_free(struct pidtab *t);

/* The value stored for `pid`, or NULL. */
void *pidtab_get(const struct pidtab *t, int pid);

/* Store `val` for `pid` (replacing any). 0, -EINVAL (pid <= 0), -ENOMEM. */
int pidtab_put(struct pidtab *t, int pid, void *val) DP_MUST_CHECK;

/* Remove `pid`; returns its value, or NULL when absent. */
void *pidtab_del(struct pidtab *t, int pid);

/*
 * Iteration: slots 0..cap-1, skipping those with pid 0. The table must not
 * change during an iteration (collect, then delete).
 */
static inline size_t pidtab_cap(const struct pidtab *t)
{
	return t->cap;
}

static inline const struct pidtab_slot *pidtab_slot(const struct pidtab *t, size_t i)
{
	return &t->slots[i];
}

#endif /* DYNPROF_PIDTAB_H */
