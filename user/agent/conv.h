/* SPDX-License-Identifier: MIT */
/*
 * One client's conversation, per wire generation. Each returns when the
 * connection is over (quit, limit, error, shutdown); the caller closes it.
 */
#ifndef DYNPROF_AGENT_CONV_H
#define DYNPROF_AGENT_CONV_H

#include "agent/conn.h"

void conv_v2_serve(struct agent_conn *c);
void conv_v1_serve(struct agent_conn *c);

#endif /* DYNPROF_AGENT_CONV_H */
