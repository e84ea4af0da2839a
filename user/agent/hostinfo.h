/* SPDX-License-Identifier: MIT */
/*
 * info.json: the machine description CANN writes into each PROF_ folder,
 * filled from what this host really reports (uname, /proc). There is no
 * CANN on the host, so cannVersion and drvVersion are "none".
 */
#ifndef DYNPROF_AGENT_HOSTINFO_H
#define DYNPROF_AGENT_HOSTINFO_H

#include "agent/device.h"

/* A malloc'd JSON text, or NULL when out of memory. */
char *hostinfo_json(const struct agent_devset *devs);

#endif /* DYNPROF_AGENT_HOSTINFO_H */
