/* SPDX-License-Identifier: MIT */
/*
 * info.json: the machine description CANN writes into each PROF_ folder,
 * filled from what this host really reports (uname, /proc). The agent's
 * folders hold host data only, so they are described as msprof's host
 * collections are (no DeviceInfo, device 64). There is no CANN on the
 * host: cannVersion is "none" and drvVersion 0. platform_version is the
 * chip the agent was told (DYNPROF_AGENT_CHIP): msprof's export stops
 * without a chip it knows, and nothing on the host names one.
 */
#ifndef DYNPROF_AGENT_HOSTINFO_H
#define DYNPROF_AGENT_HOSTINFO_H

/* msprof's device number of the host: sample.json's and info.json's "devices". */
#define HOSTINFO_HOST_DEVICE "64"
/* cannVersion of the agent's info.json: dynprof's chip detection skips such folders. */
#define HOSTINFO_NO_CANN "none"
/* Mb/s given to an interface without one (lo, veth): see net_speed. */
#define HOSTINFO_NET_SPEED_NONE 10000

/* A malloc'd JSON text on one line, or NULL when out of memory. */
char *hostinfo_json(int chip);

#endif /* DYNPROF_AGENT_HOSTINFO_H */
