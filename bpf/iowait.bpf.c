// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * Kernel side of user/hostdata/iowait.c: for the processes user space put
 * in `procs` (--host-sys=disk, a window's span), the time their threads
 * sleep waiting for block I/O.
 *
 * The scheduler marks such a sleep itself: a thread that waits in
 * io_schedule() has in_iowait set when it is switched out, and the sleep
 * ends when it is woken (where delay accounting, when on, ends its "blkio
 * delay" too). So: at sched_switch, a watched thread leaving the CPU to
 * sleep with in_iowait set gets its start in its task storage; at
 * sched_wakeup that start, if any, becomes time added to its process. Both
 * are BTF-typed raw tracepoints (no tracefs). A sleep that has not ended
 * is not counted yet: it counts in the period it ends in, as delay
 * accounting's does.
 *
 * Cost: both run for every switch and wakeup on the host (attached only
 * while a process is watched); one that is no iowait sleep ends at a load
 * or two.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "dynprof/iowait.h"

/* Task storage in tracing programs is GPL-only. */
char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* Watched processes: key host tgid. User space inserts, reads and deletes. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DP_IOWAIT_MAX_TGIDS);
	__type(key, __u32);
	__type(value, struct dp_iowait_proc);
} procs SEC(".maps");

/* The thread's iowait sleep in progress: its start (0: none). */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} asleep SEC(".maps");

SEC("tp_btf/sched_switch")
int BPF_PROG(dp_iowait_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u32 tgid;
	__u64 *start;

	/* Still runnable (preempted), or asleep for anything but block I/O. */
	if (prev_state == 0 || !BPF_CORE_READ_BITFIELD(prev, in_iowait))
		return 0;
	tgid = prev->tgid;
	if (!bpf_map_lookup_elem(&procs, &tgid))
		return 0;
	start = bpf_task_storage_get(&asleep, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (start)
		*start = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(dp_iowait_wakeup, struct task_struct *woken)
{
	struct dp_iowait_proc *proc;
	__u64 *start, now, from;
	__u32 tgid;

	/*
	 * in_iowait is still set while such a sleep is woken (the thread clears
	 * it once it runs again): any other wakeup of the host ends here,
	 * before a task-storage look-up.
	 */
	if (!BPF_CORE_READ_BITFIELD(woken, in_iowait))
		return 0;
	start = bpf_task_storage_get(&asleep, woken, 0, 0);
	if (!start || !*start)
		return 0;
	tgid = woken->tgid;
	proc = bpf_map_lookup_elem(&procs, &tgid);
	if (proc) { /* else unwatched meanwhile */
		/*
		 * A start older than the watch is one whose wakeup was not seen
		 * (the programs were detached, or the process not watched, when
		 * it came): only the time since the watch counts.
		 */
		now = bpf_ktime_get_ns();
		from = *start > proc->since_ns ? *start : proc->since_ns;
		if (now > from)
			__sync_fetch_and_add(&proc->wait_ns, now - from);
	}
	*start = 0;
	return 0;
}
