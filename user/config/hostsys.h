/* SPDX-License-Identifier: MIT */
/*
 * --host-sys (msprof's values cpu, mem, disk, network, osrt, numa): which
 * items dynprof collects itself (user/hostdata/) and which are still
 * handed to the target's CANN in the collection parameters. The items
 * dynprof collects are never passed on: CANN would run perf and ltrace
 * inside the target for osrt, iotop for disk, and sample a second time for
 * cpu, mem and network. Only numa is still CANN's.
 */
#ifndef DYNPROF_HOSTSYS_H
#define DYNPROF_HOSTSYS_H

#include <stdbool.h>
#include <stddef.h>

#define HOSTSYS_OSRT 0x1u
#define HOSTSYS_CPU 0x2u
#define HOSTSYS_MEM 0x4u
#define HOSTSYS_DISK 0x8u
#define HOSTSYS_NET 0x10u
/* What dynprof collects; "osrt,cpu,mem,disk,network" in words. */
#define HOSTSYS_OWN (HOSTSYS_OSRT | HOSTSYS_CPU | HOSTSYS_MEM | HOSTSYS_DISK | HOSTSYS_NET)

/* `item` is one of the comma-separated words of `list` (NULL: none). */
bool hostsys_list_has(const char *list, const char *item);

/* The HOSTSYS_* bits of the items dynprof collects named in `list` (NULL: 0). */
unsigned hostsys_own(const char *list);

/* The HOSTSYS_* bits `what` in msprof's words ("osrt,cpu") into buf; buf. */
const char *hostsys_own_words(unsigned what, char *buf, size_t len);

/*
 * `list` without the items dynprof collects, in its order, into out
 * (whole items only, as many as fit in len); "" when none is left.
 */
void hostsys_for_cann(const char *list, char *out, size_t len);

#endif /* DYNPROF_HOSTSYS_H */
