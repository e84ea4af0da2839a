/* SPDX-License-Identifier: MIT */
/*
 * info.json: the machine description CANN writes into each PROF_ folder,
 * filled from what this host really reports (uname, /proc). The folders
 * the agent and dynprof's host-only windows make hold host data only, so
 * they are described as msprof's host collections are (no DeviceInfo,
 * device 64). There is no CANN there: cannVersion is "none" and
 * drvVersion 0. platform_version is the chip the writer was told
 * (DYNPROF_AGENT_CHIP, --chip): msprof's export stops without a chip it
 * knows, and nothing on the host names one.
 */
#ifndef DYNPROF_SHARED_HOSTINFO_H
#define DYNPROF_SHARED_HOSTINFO_H

/* msprof's device number of the host: sample.json's and info.json's "devices". */
#define HOSTINFO_HOST_DEVICE "64"
/* cannVersion of the agent's info.json: dynprof's chip detection skips such folders. */
#define HOSTINFO_NO_CANN "none"
/* Mb/s given to an interface without one (lo, veth): see net_speed. */
#define HOSTINFO_NET_SPEED_NONE 10000

/*
 * A malloc'd JSON text on one line, or NULL when out of memory: process
 * `pid` (the lane's), whose network namespace's /proc/<pid>/net/dev is
 * `net_dev` (its interfaces are netCard's).
 */
char *hostinfo_json(int chip, long pid, const char *net_dev);

#endif /* DYNPROF_SHARED_HOSTINFO_H */
