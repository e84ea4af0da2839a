/* SPDX-License-Identifier: MIT */
/*
 * What bpf/osrt.bpf.c and user/hostdata/osrt.c share: one record per
 * completed system call of a watched process, sent through a ring buffer
 * that user space reads in batches (it is never woken per record).
 */
#ifndef DYNPROF_OSRT_H
#define DYNPROF_OSRT_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Processes watched at once (one per open window). */
#define DP_OSRT_MAX_TGIDS 1024
/* Calls in flight at once, by thread (LRU past that: the oldest call's record is lost, counted). */
#define DP_OSRT_MAX_INFLIGHT 65536
/* Ring buffer size (a power of two): 8 MiB holds ~110000 records, far more than a 10 ms read period of a target doing a million calls a second. */
#ifndef DP_OSRT_RINGBUF_BYTES
#define DP_OSRT_RINGBUF_BYTES (8u << 20)
#endif

/* A completed call. Times are CLOCK_MONOTONIC ns (bpf_ktime_get_ns). */
struct dp_osrt_call {
	__u32 tgid;
	__u32 tid;
	__u64 entry_ns;
	__u64 dur_ns;
	__s64 ret;
	__u64 arg0;
	__u32 nr;
	__u32 pad;
	char comm[16];
};

/*
 * A pthread call (uprobe + uretprobe on the target's libc) travels as a
 * dp_osrt_call whose nr is DP_OSRT_PTH_NR | the function's index in
 * DP_OSRT_PTH_FUNCS (the list msprof's ltrace traces), arg0 its first
 * argument and ret its return value.
 */
#define DP_OSRT_PTH_NR 0x80000000u
#define DP_OSRT_PTH_FUNCS                                                                   \
	{                                                                                   \
		"pthread_attr_init", "pthread_create", "pthread_join", "pthread_mutex_init" \
	}
#define DP_OSRT_PTH_NFUNCS 4
#define DP_OSRT_IS_PTH(nr) (((nr)&DP_OSRT_PTH_NR) != 0)

/* Per watched process (the value of the `tgids` map): records it could not send. */
struct dp_osrt_proc {
	__u64 lost;
};

#endif /* DYNPROF_OSRT_H */
