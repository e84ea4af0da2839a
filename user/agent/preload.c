// SPDX-License-Identifier: MIT
/*
 * LD_PRELOAD entry: a process started with PROFILING_MODE=dynamic serves
 * the socket from its first instruction, as a CANN process does. Shutdown
 * at exit is registered by dynprof_agent_start itself (server.c), for the
 * preloaded and the linked use alike.
 */
#include <stdlib.h>
#include <string.h>

#include "dynprof/agent.h"
#include "dynprof/proto.h"

__attribute__((constructor)) static void dynprof_agent_preload(void)
{
	const char *mode = getenv(DYNPROF_MODE_ENV);

	/* Failures are logged (DYNPROF_AGENT_LOG); the host program runs on. */
	if (mode && !strcmp(mode, DYNPROF_MODE_DYNAMIC))
		dynprof_agent_start(NULL);
}
