// SPDX-License-Identifier: MIT
/* pid -> pointer map (see pidtab.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/pidtab.h"

#define PIDTAB_MIN_CAP 1024

void pidtab_init(struct pidtab *t)
{
	t->slots = NULL;
	t->cap = 0;
	t->count = 0;
}

void pidtab_free(struct pidtab *t)
{
	free(t->slots);
	pidtab_init(t);
}

/* Fibonacci hashing: sequential pids spread over the whole table. */
static size_t home_slot(const struct pidtab *t, int pid)
{
	return (size_t)(((uint32_t)pid * 2654435769u) & (uint32_t)(t->cap - 1));
}

void *pidtab_get(const struct pidtab *t, int pid)
{
	if (!t->cap || pid <= 0)
		return NULL;
	for (size_t i = home_slot(t, pid);; i = (i + 1) & (t->cap - 1)) {
		if (t->slots[i].pid == pid)
			return t->slots[i].val;
		if (t->slots[i].pid == 0)
			return NULL;
	}
}

/* Insert into a table known to hold a free slot and not `pid` yet. */
static void insert_fresh(struct pidtab *t, int pid, void *val)
{
	size_t i = home_slot(t, pid);

	while (t->slots[i].pid)
		i = (i + 1) & (t->cap - 1);
	t->slots[i].pid = pid;
	t->slots[i].val = val;
	t->count++;
}

static int grow(struct pidtab *t)
{
	size_t ncap = t->cap ? t->cap * 2 : PIDTAB_MIN_CAP;
	struct pidtab old = *t;

	if (ncap > SIZE_MAX / sizeof(*t->slots) / 2)
		return -ENOMEM;
	t->slots = calloc(ncap, sizeof(*t->slots));
	if (!t->slots) {
		*t = old;
		return -ENOMEM;
	}
	t->cap = ncap;
	t->count = 0;
	for (size_t i = 0; i < old.cap; i++)
		if (old.slots[i].pid)
			insert_fresh(t, old.slots[i].pid, old.slots[i].val);
	free(old.slots);
	return 0;
}

int pidtab_put(struct pidtab *t, int pid, void *val)
{
	if (pid <= 0)
		return -EINVAL;
	if (t->cap) {
		for (size_t i = home_slot(t, pid); t->slots[i].pid; i = (i + 1) & (t->cap - 1)) {
			if (t->slots[i].pid == pid) {
				t->slots[i].val = val;
				return 0;
			}
		}
	}
	/* At most half full: probes stay short. */
	if ((t->count + 1) * 2 > t->cap) {
		int err = grow(t);

		if (err)
			return err;
	}
	insert_fresh(t, pid, val);
	return 0;
}

/* true when slot `home` lies cyclically in (hole, cur]: the entry may not move to hole. */
static int stays(size_t hole, size_t cur, size_t home)
{
	if (hole <= cur)
		return home > hole && home <= cur;
	return home > hole || home <= cur;
}

void *pidtab_del(struct pidtab *t, int pid)
{
	size_t mask = t->cap - 1, i, j;
	void *val;

	if (!t->cap || pid <= 0)
		return NULL;
	for (i = home_slot(t, pid); t->slots[i].pid != pid; i = (i + 1) & mask)
		if (t->slots[i].pid == 0)
			return NULL;
	val = t->slots[i].val;
	/* Backward shift: pull later entries of the run into the hole. */
	for (j = (i + 1) & mask; t->slots[j].pid; j = (j + 1) & mask) {
		if (stays(i, j, home_slot(t, t->slots[j].pid)))
			continue;
		t->slots[i] = t->slots[j];
		i = j;
	}
	t->slots[i].pid = 0;
	t->slots[i].val = NULL;
	t->count--;
	return val;
}
