/* SPDX-License-Identifier: MIT */
/*
 * --host-sys=disk's iowait time (bpf/iowait.bpf.c): loaded on the first
 * run that asks for disk and kept for the run, its programs attached only
 * while a process is watched (from its window's open, or its keeper's
 * start, to its close): they run on every context switch of the host.
 *
 * Not thread-safe: the caller serialises (hostdata.c holds its lock).
 * Errors: convention 2 of docs/ERRORS.md (negative errno, the reason in why).
 */
#ifndef DYNPROF_IOWAIT_USER_H
#define DYNPROF_IOWAIT_USER_H

#include <stddef.h>
#include <stdint.h>

#include "shared/compiler.h"

/* Load and attach once. 0 when loaded already. */
int iowait_load(char *why, size_t why_len) DP_MUST_CHECK;

/* Watch the host process `tgid` from now on (its total starts at 0); once per process at a time. */
int iowait_watch(uint32_t tgid, char *why, size_t why_len) DP_MUST_CHECK;

/* Its threads' iowait sleeps that ended since it was watched, summed (ns). */
int iowait_read(uint32_t tgid, uint64_t *wait_ns) DP_MUST_CHECK;

/* Stop watching it. */
void iowait_unwatch(uint32_t tgid);

#endif /* DYNPROF_IOWAIT_USER_H */
