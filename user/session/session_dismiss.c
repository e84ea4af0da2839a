// SPDX-License-Identifier: MIT
/*
 * The processes `quit SEL` let go (see session.h): pid and start time, so
 * that follow mode does not take them again, and a pid the kernel gives
 * to another process later is not mistaken for one of them.
 */
#include <stdio.h>
#include <stdlib.h>

#include "common/grow.h"
#include "common/procstat.h"
#include "session/session_impl.h"

struct session_dismissed_proc {
	int pid;
	uint64_t start; /* /proc/<pid>/stat field 22 */
};

/* The process's start time now; false when it is gone. */
static bool start_of(int pid, uint64_t *start)
{
	char path[32];
	struct procstat st;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (procstat_read(path, &st) || procstat_dead(st.state))
		return false;
	*start = st.start;
	return true;
}

static bool still_there(const struct session_dismissed_proc *d)
{
	uint64_t start;

	return start_of(d->pid, &start) && start == d->start;
}

/* Entries of processes that are gone (or whose pid is another's now) are dropped. */
static void prune(struct session *s)
{
	int n = 0;

	for (int i = 0; i < s->ndismissed; i++)
		if (still_there(&s->dismissed[i]))
			s->dismissed[n++] = s->dismissed[i];
	s->ndismissed = n;
}

void session_remember_dismissed(struct session *s, int pid)
{
	struct session_dismissed_proc d = { .pid = pid };
	void *table = s->dismissed;

	if (!start_of(pid, &d.start) || session_dismissed(s, pid))
		return;
	prune(s); /* the set holds live processes only: it cannot grow over a long run */
	if (grow_for_one(&table, &s->dismissed_cap, (size_t)s->ndismissed, sizeof(d), 8))
		return; /* out of memory: follow mode may take it again, nothing worse */
	s->dismissed = table;
	s->dismissed[s->ndismissed++] = d;
}

bool session_dismissed(const struct session *s, int pid)
{
	for (int i = 0; i < s->ndismissed; i++)
		if (s->dismissed[i].pid == pid)
			return still_there(&s->dismissed[i]);
	return false;
}

void session_forget_dismissed(struct session *s)
{
	free(s->dismissed);
	s->dismissed = NULL;
	s->ndismissed = 0;
	s->dismissed_cap = 0;
}
