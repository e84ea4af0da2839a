/* SPDX-License-Identifier: MIT */
/*
 * Kernel call counting (bpf/callcount.bpf.c, user/kernel/callcount.c): the map key,
 * the ring-buffer record and the sizes, defined once for BPF and user code
 * (same typedef trick as events.h: vmlinux.h types in BPF, <stdint.h> ones
 * in user space).
 */
#ifndef DYNPROF_CALLCOUNT_SHARED_H
#define DYNPROF_CALLCOUNT_SHARED_H

#ifndef __VMLINUX_H__
#include <stdint.h>
typedef uint32_t __dp_u32;
typedef uint64_t __dp_u64;
#else
typedef __u32 __dp_u32;
typedef __u64 __dp_u64;
#endif

/* One probe in one process: key of the `counts` and `thresholds` maps. */
struct dp_cc_key {
	__dp_u32 tgid;     /* host tgid */
	__dp_u32 probe_id; /* the caller's number for LIB:SYMBOL (the link's BPF cookie) */
};

/* A threshold was reached: one record per armed threshold, never per call. */
struct dp_cc_record {
	__dp_u32 tgid;
	__dp_u32 probe_id;
	__dp_u64 count;    /* the counter right after the call that reached it */
	__dp_u64 ktime_ns; /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
};

/* Probes (process x LIB:SYMBOL) counted at once. */
#define DP_CC_MAX_PROBES 16384

/*
 * Ring buffer bytes (a power of 2, at least a page). A record takes 32
 * bytes with its header, so 64 KiB holds 2048 thresholds reached between
 * two reads; a lost record is found again by a sweep of the counters.
 */
#define DP_CC_RINGBUF_BYTES (64 * 1024)

#endif /* DYNPROF_CALLCOUNT_SHARED_H */
