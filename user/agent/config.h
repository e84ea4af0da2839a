/* SPDX-License-Identifier: MIT */
/*
 * The agent's settings, read once from the environment at start (see
 * include/dynprof/agent.h for the variables and their defaults).
 *
 * Errors: convention 2 of docs/ERRORS.md (-EINVAL, the variable's name in *bad).
 */
#ifndef DYNPROF_AGENT_CONFIG_H
#define DYNPROF_AGENT_CONFIG_H

#include "dynprof/proto.h"
#include "shared/compiler.h"

#define AGENT_PROTOCOL_ENV     "DYNPROF_AGENT_PROTOCOL"
#define AGENT_MAX_REQUESTS_ENV "DYNPROF_AGENT_MAX_REQUESTS"
#define AGENT_IDLE_TIMEOUT_ENV "DYNPROF_AGENT_IDLE_TIMEOUT"
#define AGENT_LOG_ENV          "DYNPROF_AGENT_LOG"
#define AGENT_FLAVOUR_ENV      "DYNPROF_AGENT_FLAVOUR"

struct agent_config {
	enum proto_version protocol; /* PROTO_V1 or PROTO_V2 */
	int max_requests;            /* per connection, then DISCONNECT */
	int idle_timeout_sec;        /* idle (not collecting), then DISCONNECT */
	int key;                     /* DYNAMIC_PROFILING_KEY_PID (v2, > 0), else 0 */
	int log;                     /* DYNPROF_AGENT_LOG set */
	int abstract;                /* DYNPROF_AGENT_FLAVOUR=abstract: CANN 8.5.0's
					\0dyn_prof_sock_<key> (v2 only) */
};

/*
 * Fill `cfg` from the environment. Returns 0, or -EINVAL when a variable
 * holds a value the agent cannot use (the variable name goes to `bad`).
 * An unusable DYNAMIC_PROFILING_KEY_PID is ignored, as CANN ignores it.
 */
int agent_config_load(struct agent_config *cfg, const char **bad) DP_MUST_CHECK;

#endif /* DYNPROF_AGENT_CONFIG_H */
