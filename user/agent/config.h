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

#define AGENT_PROTOCOL_ENV "DYNPROF_AGENT_PROTOCOL"
#define AGENT_FLAVOUR_ENV "DYNPROF_AGENT_FLAVOUR"
#define AGENT_MAX_REQUESTS_ENV "DYNPROF_AGENT_MAX_REQUESTS"
#define AGENT_IDLE_TIMEOUT_ENV "DYNPROF_AGENT_IDLE_TIMEOUT"
#define AGENT_LOG_ENV "DYNPROF_AGENT_LOG"
#define AGENT_ORPHAN_GRACE_ENV "DYNPROF_AGENT_ORPHAN_GRACE"
#define AGENT_CHIP_ENV "DYNPROF_AGENT_CHIP"

/* info.json's platform_version when DYNPROF_AGENT_CHIP is unset: msprof's id of the Ascend 910B. */
#define AGENT_CHIP_DEFAULT 5

/* Seconds a window whose client vanished stays open (8.5.0 flavour) before the agent stops it. */
#define AGENT_ORPHAN_GRACE_DEFAULT 60

#define AGENT_KEY_MAX 32 /* the key text, as it goes into the socket name */

struct agent_config {
	enum proto_version protocol; /* PROTO_V1 or PROTO_V2 */
	int abstract;                /* DYNPROF_AGENT_FLAVOUR=abstract: CANN 8.5.0's
					\0dyn_prof_sock_<key>, no limits (v2 only) */
	int max_requests;            /* answered per connection, then DISCONNECT; 0: no limit */
	int idle_timeout_sec;        /* 1-s idle ticks allowed per connection; 0: no limit */
	char key[AGENT_KEY_MAX]; /* DYNAMIC_PROFILING_KEY_PID's raw text when > 0 (v2), else "" */
	int log;                 /* DYNPROF_AGENT_LOG set */
	int orphan_grace_sec;    /* DYNPROF_AGENT_ORPHAN_GRACE: an abstract-flavour window
					whose client vanished is stopped after this; 0: never */
	int chip; /* DYNPROF_AGENT_CHIP: info.json's platform_version, one msprof knows */
};

/*
 * Fill `cfg` from the environment. Returns 0, or -EINVAL when a variable
 * holds a value the agent cannot use (the variable name goes to `bad`).
 * DYNAMIC_PROFILING_KEY_PID is read as CANN 9.x reads it (stoi, whole
 * text): not an integer, or outside int32, fails the start as it keeps
 * CANN's server from starting.
 */
int agent_config_load(struct agent_config *cfg, const char **bad) DP_MUST_CHECK;

#endif /* DYNPROF_AGENT_CONFIG_H */
