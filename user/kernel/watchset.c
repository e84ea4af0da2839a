// SPDX-License-Identifier: MIT
/* The table of watched pids (see watchset.h). */
#include <errno.h>
#include <stdlib.h>

#include "common/grow.h"
#include "shared/clock.h"
#include "dynprof/events.h"
#include "kernel/watchset.h"

ssize_t watchset_find(const struct watchset *s, int pid)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->w[i].pid == pid)
			return (ssize_t)i;
	return -1;
}

int watchset_add(struct watchset *s, int pid, int pidfd)
{
	if (s->n >= DP_MAX_WATCHED)
		return -ENOSPC;
	if (grow_for_one((void **)&s->w, &s->cap, s->n, sizeof(*s->w), 16))
		return -ENOMEM;
	s->w[s->n++] = (struct watch){ .pid = pid, .pidfd = pidfd, .since_ns = clock_mono_ns() };
	return 0;
}

void watchset_remove(struct watchset *s, size_t i)
{
	s->w[i] = s->w[--s->n];
}

void watchset_free(struct watchset *s)
{
	free(s->w);
	*s = (struct watchset){ 0 };
}
