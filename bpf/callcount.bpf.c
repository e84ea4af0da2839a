// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * Kernel side of user/kernel/callcount.c: counting a function's calls.
 *
 * One program, attached many times: one uprobe link per (target process,
 * probe), filtered to that process by the kernel (the link's pid), with
 * the probe's number as the link's BPF cookie. Each call adds one to the
 * (tgid, probe) counter; a ring-buffer record goes out only when the
 * counter reaches the threshold user space armed for it, and the record
 * disarms the threshold in the same step, so a threshold fires once however
 * many calls pass it. Never one record per call.
 *
 * Portability floor: bpf_get_attach_cookie for perf-event (uprobe) links,
 * Linux 5.15; 64-bit atomics with fetch and cmpxchg, 5.12; ring buffer, 5.8.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "dynprof/callcount.h"

/*
 * No helper used here is GPL-only; the license is discover.bpf.c's, in the
 * form the kernel takes as GPL-compatible, so both objects stay alike.
 */
char LICENSE[] SEC("license") = "Dual MIT/GPL";

/*
 * Calls so far, by (tgid, probe). User space inserts the entry (0) before
 * it attaches the probe and deletes it when it forgets the process; the
 * program never creates entries, so a call it cannot place costs one
 * failed lookup. Not preallocated: a deleted element is freed only after
 * the programs that may still hold it are done, never reused under them.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DP_CC_MAX_PROBES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct dp_cc_key);
	__type(value, __u64);
} counts SEC(".maps");

/*
 * The armed threshold by (tgid, probe): 0 or absent, none. User space
 * writes the lowest it holds; the program swaps it to 0 when it fires.
 * Not preallocated, for the same reason as `counts`: user space replaces
 * elements here while calls are counted.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DP_CC_MAX_PROBES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct dp_cc_key);
	__type(value, __u64);
} thresholds SEC(".maps");

/* struct dp_cc_record, one per threshold reached. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, DP_CC_RINGBUF_BYTES);
} fired SEC(".maps");

/* Records sent, and records lost to a full ring buffer (read via skel->bss). */
__u64 records_sent = 0;
__u64 records_lost = 0;

/* Send the record of a threshold reached; a full ring counts a loss. */
static __always_inline void send_record(const struct dp_cc_key *key, __u64 count)
{
	struct dp_cc_record *r = bpf_ringbuf_reserve(&fired, sizeof(*r), 0);

	if (!r) {
		__sync_fetch_and_add(&records_lost, 1);
		return;
	}
	r->tgid = key->tgid;
	r->probe_id = key->probe_id;
	r->count = count;
	r->ktime_ns = bpf_ktime_get_ns();
	bpf_ringbuf_submit(r, 0);
	__sync_fetch_and_add(&records_sent, 1);
}

SEC("uprobe")
int BPF_KPROBE(dp_count_call)
{
	struct dp_cc_key key = {
		.tgid = (__u32)(bpf_get_current_pid_tgid() >> 32),
		.probe_id = (__u32)bpf_get_attach_cookie(ctx),
	};
	__u64 *count, *armed, now, threshold;

	count = bpf_map_lookup_elem(&counts, &key);
	if (!count)
		return 0; /* forgotten, or not yet counted */
	/* Threads of the target call at once: fetch-and-add loses none. */
	now = __sync_fetch_and_add(count, 1) + 1;

	armed = bpf_map_lookup_elem(&thresholds, &key);
	if (!armed)
		return 0;
	threshold = *armed;
	if (threshold == 0 || now < threshold)
		return 0;
	/*
	 * Several threads may pass the threshold together; only the one whose
	 * swap finds it still armed reports it. A threshold user space wrote
	 * meanwhile fails the swap and stays armed for the next call.
	 */
	if (__sync_val_compare_and_swap(armed, threshold, 0) != threshold)
		return 0;
	send_record(&key, now);
	return 0;
}
