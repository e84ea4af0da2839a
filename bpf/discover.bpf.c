// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * Kernel side of user/discover.c: process events about targets.
 *
 * One program per kernel event, all on raw tracepoints (they need no
 * tracefs, see KERNEL-NOTES.md), all reporting through the one ring buffer
 * `events` as struct dp_event (include/dynprof/events.h). Today: exit.
 * Exec, fork and card opens belong here too, each as its own section below.
 *
 * Portability floor: BPF_MAP_TYPE_RINGBUF (Linux 5.8); the helpers used here
 * are all older than that. Field offsets are CO-RE relocated at load time.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "dynprof/events.h"

/*
 * bpf_get_current_task() and bpf_probe_read_kernel() (what BPF_CORE_READ
 * expands to) are GPL-only helpers: the kernel refuses to load a program
 * using them unless its license is GPL-compatible. The project is MIT, so
 * this file is dual-licensed and says so in the form the kernel accepts
 * (license_is_gpl_compatible(): "Dual MIT/GPL").
 */
char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* ---- maps and globals shared with user space ------------------------------ */

/* Host tgids user space asked about: key tgid, value unused. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DP_MAX_WATCHED);
	__type(key, __u32);
	__type(value, __u8);
} watched SEC(".maps");

/*
 * struct dp_event records. A record costs 8 bytes of header + 24 of event,
 * so 256 KiB holds more exit events than there can be watched pids: it only
 * fills up if user space stops reading (or when later programs add volume).
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

/* Events dropped because the ring buffer was full (read via skel->bss). */
__u64 lost_events = 0;

static __always_inline struct dp_event *reserve_event(__u32 type, __u32 pid)
{
	struct dp_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		__sync_fetch_and_add(&lost_events, 1);
		return NULL;
	}
	e->type = type;
	e->pid = pid;
	e->exit_code = 0;
	e->pad = 0;
	e->ktime_ns = bpf_ktime_get_ns();
	return e;
}

/* ---- exit ------------------------------------------------------------------ */

/*
 * sched_process_exit fires in do_exit() of every exiting *thread*, in that
 * thread's context, after it has set task->exit_code (the wait(2) status) and
 * decremented signal->live. What a target's watcher means by "the process
 * exited" is the whole thread group being gone, which is also what the pidfd
 * fallback reports (a pidfd polls readable once the group is empty).
 *
 * The obvious test, "the exiting thread is the group leader" (pid == tgid),
 * gets that wrong in two real cases:
 *  - the main thread calls pthread_exit() while other threads run on: the
 *    leader exits first and the process lives on (its pid stays valid);
 *  - a non-leader thread calls execve(): de_thread() kills the old leader,
 *    which passes here with pid == tgid, and the process carries on under
 *    the same pid with the new program.
 * and in exit_group() the leader is not necessarily the last thread out.
 * So the test is signal->live == 0 instead: the last thread of the group to
 * enter do_exit() sees it, whichever thread that is, on every kernel since
 * the ring buffer exists (6.16+ also passes it as the tracepoint's
 * group_dead argument, which a raw_tp program cannot rely on elsewhere).
 * Limits: two threads dying together may both read 0 after the last
 * decrement, so an exit can be reported twice (the map delete below makes it
 * rare, user space drops the duplicate); exit_code is the last thread's,
 * which for exit()/exit_group() and fatal signals is the group's status.
 * Threads of unwatched processes cost one hash lookup.
 */
SEC("raw_tp/sched_process_exit")
int dp_exit(void *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct task_struct *task;
	struct dp_event *e;

	if (!bpf_map_lookup_elem(&watched, &tgid))
		return 0;

	task = (struct task_struct *)bpf_get_current_task();
	if (BPF_CORE_READ(task, signal, live.counter) != 0)
		return 0; /* other threads of the group are still alive */

	/* Once: a pid reused before user space catches up is not "watched". */
	bpf_map_delete_elem(&watched, &tgid);

	e = reserve_event(DP_EVENT_EXIT, tgid);
	if (!e)
		return 0;
	e->exit_code = BPF_CORE_READ(task, exit_code);
	bpf_ringbuf_submit(e, 0);
	return 0;
}
