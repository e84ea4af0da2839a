// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * Kernel side of user/hostdata/osrt.c: every system call of the processes
 * user space put in `tgids` (--host-sys=osrt, for the span of a window),
 * one ring-buffer record per completed call.
 *
 * BTF-typed raw tracepoints (tp_btf) on raw_syscalls sys_enter and
 * sys_exit: no tracefs needed, and the syscall's registers are read
 * directly, not through a helper. The filter is the process (tgid), so
 * threads created after the window opened are seen as well. At sys_enter
 * a watched thread's entry time, number and first argument go in
 * `inflight`, the thread's own task storage (made at its first watched
 * call, gone with the thread); at sys_exit they become one record. Task
 * storage, not a map keyed by tid: no hashing, and sys_exit needs no
 * `tgids` lookup (a slot with an entry time is a watched call). Measured
 * here (bpf_stats, a getppid loop): 12 ns less at sys_enter than raw_tp
 * with a helper's read of the registers; of sys_exit's ~80 ns, the ring
 * buffer's reserve and submit are ~45 (docs/BENCHMARKS.md).
 * Records are submitted with BPF_RB_NO_WAKEUP: user space reads the ring
 * on its own period, so a call never costs a reader's wakeup. A record
 * that finds no room is counted in its process's `tgids` value.
 *
 * The pthread calls msprof's ltrace list names come from a uprobe and a
 * uretprobe on each function in the target's libc (attached per process by
 * user/hostdata/pthprobe.c, the function's index as the attach cookie),
 * filtered by the same `tgids`. Only a thread's outermost call of a
 * function is recorded (its depth is kept by (tid, function)), and a
 * return whose entry was not seen (entered before the attach) is ignored.
 *
 * Portability floor: ring buffer, Linux 5.8; tp_btf, 5.5 (and kernel
 * BTF, as CO-RE needs anyway); task storage in tracing programs, 5.11;
 * bpf_get_attach_cookie on uprobes, 5.15.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "dynprof/osrt.h"

/* BPF_CORE_READ of the syscall's registers is GPL-only: see discover.bpf.c. */
char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* Watched processes: key host tgid, value its loss counter. User space inserts and deletes. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DP_OSRT_MAX_TGIDS);
	__type(key, __u32);
	__type(value, struct dp_osrt_proc);
} tgids SEC(".maps");

struct inflight_call {
	__u64 entry_ns; /* 0: none in flight */
	__u64 arg0;
	__u32 nr;
	__u32 pad;
};

/* The thread's call in flight. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct inflight_call);
} inflight SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, DP_OSRT_RINGBUF_BYTES);
} calls SEC(".maps");

struct pth_key {
	__u32 tid;
	__u32 func;
};

struct pth_call {
	__u64 entry_ns;
	__u64 arg0;
	__u32 depth; /* 0: none in flight */
	__u32 pad;
};

/* The pthread call in flight, by (host tid, function). LRU as `inflight`. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, DP_OSRT_MAX_INFLIGHT);
	__type(key, struct pth_key);
	__type(value, struct pth_call);
} pth_inflight SEC(".maps");

/*
 * x86-64's uretprobe system call (Linux 6.11+): the return trampoline of
 * our own pthread uretprobes enters it once per probed return. It is the
 * probe's cost, not a call of the target: not recorded. Unassigned before.
 */
#if defined(__TARGET_ARCH_x86)
#define DP_URETPROBE_NR 335
#else
#define DP_URETPROBE_NR -1
#endif

SEC("tp_btf/sys_enter")
int BPF_PROG(dp_osrt_enter, struct pt_regs *regs, long id)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct inflight_call *c;

	if (!bpf_map_lookup_elem(&tgids, &tgid) || id == DP_URETPROBE_NR)
		return 0;
	c = bpf_task_storage_get(&inflight, bpf_get_current_task_btf(), 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!c)
		return 0;
	c->nr = (__u32)id;
	c->arg0 = (__u64)PT_REGS_PARM1(regs); /* a typed pointer: read directly */
	c->entry_ns = bpf_ktime_get_ns();
	return 0;
}

/* Only a thread that had a watched call has a slot: others end at the first test. */
SEC("tp_btf/sys_exit")
int BPF_PROG(dp_osrt_exit, struct pt_regs *regs, long ret)
{
	__u64 now = bpf_ktime_get_ns(), pid_tgid = bpf_get_current_pid_tgid();
	struct inflight_call *c = bpf_task_storage_get(&inflight, bpf_get_current_task_btf(), 0, 0);
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	struct dp_osrt_proc *p;
	struct dp_osrt_call *r;

	if (!c || !c->entry_ns) /* not watched, or entered before the window opened */
		return 0;
	r = bpf_ringbuf_reserve(&calls, sizeof(*r), 0);
	if (!r) {
		p = bpf_map_lookup_elem(&tgids, &tgid);
		if (p) /* else the window ended meanwhile: not its loss */
			__sync_fetch_and_add(&p->lost, 1);
		c->entry_ns = 0;
		return 0;
	}
	r->tgid = tgid;
	r->tid = tid;
	r->entry_ns = c->entry_ns;
	r->dur_ns = now - c->entry_ns;
	r->ret = ret;
	r->arg0 = c->arg0;
	r->nr = c->nr;
	r->pad = 0;
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	c->entry_ns = 0;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	return 0;
}

static __always_inline struct pth_key pth_key_now(void *ctx)
{
	return (struct pth_key){
		.tid = (__u32)bpf_get_current_pid_tgid(),
		.func = (__u32)bpf_get_attach_cookie(ctx),
	};
}

SEC("uprobe")
int BPF_KPROBE(dp_osrt_pth_entry)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct pth_key key = pth_key_now(ctx);
	struct pth_call *c, fresh = {};

	if (!bpf_map_lookup_elem(&tgids, &tgid))
		return 0;
	c = bpf_map_lookup_elem(&pth_inflight, &key);
	if (!c) {
		bpf_map_update_elem(&pth_inflight, &key, &fresh, BPF_ANY);
		c = bpf_map_lookup_elem(&pth_inflight, &key);
		if (!c)
			return 0;
	}
	if (c->depth++ == 0) { /* the thread's own slot: no other thread writes it */
		c->arg0 = (__u64)PT_REGS_PARM1(ctx);
		c->entry_ns = bpf_ktime_get_ns();
	}
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(dp_osrt_pth_return)
{
	__u64 now = bpf_ktime_get_ns(), pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32;
	struct dp_osrt_proc *p = bpf_map_lookup_elem(&tgids, &tgid);
	struct pth_key key = pth_key_now(ctx);
	struct pth_call *c;
	struct dp_osrt_call *r;

	if (!p)
		return 0;
	c = bpf_map_lookup_elem(&pth_inflight, &key);
	if (!c || c->depth == 0 || --c->depth) /* entered before the attach, or not the outermost */
		return 0;
	r = bpf_ringbuf_reserve(&calls, sizeof(*r), 0);
	if (!r) {
		__sync_fetch_and_add(&p->lost, 1);
		return 0;
	}
	r->tgid = tgid;
	r->tid = key.tid;
	r->entry_ns = c->entry_ns;
	r->dur_ns = now - c->entry_ns;
	r->ret = (__s64)(int)PT_REGS_RC(ctx); /* the pthread functions return int */
	r->arg0 = c->arg0;
	r->nr = DP_OSRT_PTH_NR | key.func;
	r->pad = 0;
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	return 0;
}
