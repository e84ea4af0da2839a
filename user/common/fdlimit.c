// SPDX-License-Identifier: MIT
/* The file descriptor limit raised for many targets (see fdlimit.h). */
#include <stdbool.h>
#include <sys/resource.h>

#include "common/fdlimit.h"

static struct rlimit first;
static bool raised;

void fdlimit_raise(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= rl.rlim_max)
		return;
	first = rl;
	rl.rlim_cur = rl.rlim_max;
	/* Refused (a seccomp profile): dynprof says how many it needs when it runs out. */
	raised = setrlimit(RLIMIT_NOFILE, &rl) == 0;
}

void fdlimit_restore(void)
{
	if (raised)
		setrlimit(RLIMIT_NOFILE, &first);
}
