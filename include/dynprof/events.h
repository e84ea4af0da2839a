/* SPDX-License-Identifier: MIT */
/*
 * Events the BPF programs send to user space: defined once, included by
 * bpf/<concern>.bpf.c (with vmlinux.h) and by user/<file>.c (with <stdint.h>).
 */
#ifndef DYNPROF_EVENTS_H
#define DYNPROF_EVENTS_H

#ifndef __VMLINUX_H__
#include <stdint.h>
typedef uint32_t __dp_u32;
typedef int32_t __dp_s32;
typedef uint64_t __dp_u64;
#else
typedef __u32 __dp_u32;
typedef __s32 __dp_s32;
typedef __u64 __dp_u64;
#endif

enum dp_event_type {
	DP_EVENT_EXIT = 1, /* a watched process (thread group) exited */
};

struct dp_event {
	__dp_u32 type;      /* enum dp_event_type */
	__dp_u32 pid;       /* host tgid */
	__dp_s32 exit_code; /* as wait(2) encodes it */
	__dp_u32 pad;
	__dp_u64 ktime_ns;  /* bpf_ktime_get_ns() at the event */
};

#define DP_MAX_WATCHED 4096

#endif /* DYNPROF_EVENTS_H */
