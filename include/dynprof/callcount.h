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
	__dp_u64 count;      /* the counter right after the call that reached it */
	__dp_u64 ktime_ns;   /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__dp_u64 value_ns;   /* timed probes: the duration or gap that crossed the limit; else 0 */
	__dp_u64 typical_ns; /* timed probes: the typical value before it (0: none yet) */
};

/*
 * Timed probes: the `counts` counter of such a probe counts the calls (or
 * gaps) that crossed its limit, and thresholds arm on that counter as on
 * a plain count. The limit and the typical value live in `timing`, keyed
 * as `counts`: user space writes the whole value once, before the attach,
 * and never again; the programs update the measured fields.
 *
 * Typical value: an integer moving average. The first DP_TM_WARMUP
 * samples make a plain mean; after them each sample moves it by 1/8
 * (ewma += (x - ewma) / 8). A sample that crossed the limit is not folded
 * in, so a run of slow calls does not make slowness typical. A multiple
 * limit is tested only after the warm-up.
 */
#define DP_TM_WARMUP 8
#define DP_TM_EWMA_SHIFT 3

enum dp_tm_kind {
	DP_TM_SLOW = 1,  /* uprobe + uretprobe: the outermost call's duration per thread */
	DP_TM_GAP = 2,   /* uprobe: the time between two calls' entries (any thread) */
	DP_TM_STALL = 3, /* uprobe: the last call's time only (user space watches it) */
};

struct dp_tm_state {
	/* Written by user space before the attach. */
	__dp_u32 kind;       /* enum dp_tm_kind */
	__dp_u32 mult_milli; /* the limit as a multiple of typical_ns, in 1/1000; 0: limit_ns */
	__dp_u64 limit_ns;   /* the limit; 0 with a multiple, and for DP_TM_STALL */
	__dp_u32 gen;        /* this attach's number: older `depth` entries are not its calls */
	__dp_u32 pad;
	/* Written by the programs. */
	__dp_u64 samples;    /* durations or gaps measured */
	__dp_u64 typical_ns; /* their moving average (above) */
	__dp_u64 last_ns;    /* the latest call's entry (gap, stall); 0: none yet */
	__dp_u64 calls;      /* entries seen */
};

/* One thread in one timed function: key of `depth`. */
struct dp_tm_thread {
	__dp_u32 tid;
	__dp_u32 probe_id;
};

/*
 * Calls in progress of that thread (recursion nests them); the outermost
 * one's entry. `gen` is the attach it was counted under: a thread that was
 * inside the function when its probe was forgotten, and a later attach of
 * the same (tid, probe), must not inherit that depth.
 */
struct dp_tm_depth {
	__dp_u64 entry_ns;
	__dp_u32 depth;
	__dp_u32 gen;
};

/* Threads inside timed functions at once (an LRU: a thread that died inside one is evicted). */
#define DP_TM_MAX_THREADS 16384

/* Probes (process x LIB:SYMBOL) counted at once. */
#define DP_CC_MAX_PROBES 16384

/*
 * Ring buffer bytes (a power of 2, at least a page). A record takes 56
 * bytes with its header, so 64 KiB holds 1170 thresholds reached between
 * two reads; a lost record is found again by a sweep of the counters.
 */
#define DP_CC_RINGBUF_BYTES (64 * 1024)

#endif /* DYNPROF_CALLCOUNT_SHARED_H */
