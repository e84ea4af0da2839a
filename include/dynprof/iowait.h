/* SPDX-License-Identifier: MIT */
/*
 * What bpf/iowait.bpf.c and user/hostdata/iowait.c share: per watched
 * process, the time its threads spent asleep waiting for block I/O (the
 * kernel's "iowait" sleeps), what iotop's IO column reports from delay
 * accounting, measured here without it (kernel.task_delayacct is off by
 * default).
 */
#ifndef DYNPROF_IOWAIT_H
#define DYNPROF_IOWAIT_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Processes watched at once (one per open window or kept target). */
#define DP_IOWAIT_MAX_TGIDS 1024

/* A watched process's total, since it was watched. */
struct dp_iowait_proc {
	__u64 wait_ns; /* its threads' iowait sleeps that ended, summed */
	__u64 since_ns; /* when it was watched (bpf_ktime_get_ns): a sleep counts from here at the most */
};

#endif /* DYNPROF_IOWAIT_H */
