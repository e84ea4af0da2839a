// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * Kernel side of user/kernel/callcount.c: counting a function's calls, and
 * timing them (slow:, gap:, stall:; dynprof/callcount.h says how).
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
 * Linux 5.15; 64-bit atomics with fetch, xchg and cmpxchg, 5.12; ring buffer,
 * 5.8; LRU hash maps, 4.10.
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

/* Timed probes' limit and typical value, by (tgid, probe); user space inserts and deletes. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DP_CC_MAX_PROBES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct dp_cc_key);
	__type(value, struct dp_tm_state);
} timing SEC(".maps");

/*
 * Calls in progress per (thread, probe) of slow: probes. An LRU: a thread
 * that ended inside the function (exit, longjmp past it) leaves an entry
 * nobody deletes; the oldest go first when the map is full.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, DP_TM_MAX_THREADS);
	__type(key, struct dp_tm_thread);
	__type(value, struct dp_tm_depth);
} depth SEC(".maps");

/* struct dp_cc_record, one per threshold reached. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, DP_CC_RINGBUF_BYTES);
} fired SEC(".maps");

/* Records sent, and records lost to a full ring buffer (read via skel->bss). */
__u64 records_sent = 0;
__u64 records_lost = 0;

/* Send the record of a threshold reached; a full ring counts a loss. */
static __always_inline void send_record(const struct dp_cc_key *key, __u64 count, __u64 value, __u64 typical)
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
	r->value_ns = value;
	r->typical_ns = typical;
	bpf_ringbuf_submit(r, 0);
	__sync_fetch_and_add(&records_sent, 1);
}

static __always_inline struct dp_cc_key key_now(void *ctx)
{
	return (struct dp_cc_key){
		.tgid = (__u32)(bpf_get_current_pid_tgid() >> 32),
		.probe_id = (__u32)bpf_get_attach_cookie(ctx),
	};
}

/*
 * One more on the (tgid, probe) counter: a call, or for a timed probe a
 * call past its limit. A record goes out when it reaches the armed
 * threshold.
 */
static __always_inline void count_one(const struct dp_cc_key *key, __u64 value, __u64 typical)
{
	__u64 *count, *armed, now, threshold;

	count = bpf_map_lookup_elem(&counts, key);
	if (!count)
		return; /* forgotten, or not yet counted */
	/* Threads of the target call at once: fetch-and-add loses none. */
	now = __sync_fetch_and_add(count, 1) + 1;

	armed = bpf_map_lookup_elem(&thresholds, key);
	if (!armed)
		return;
	threshold = *armed;
	if (threshold == 0 || now < threshold)
		return;
	/*
	 * Several threads may pass the threshold together; only the one whose
	 * swap finds it still armed reports it. A threshold user space wrote
	 * meanwhile fails the swap and stays armed for the next call.
	 */
	if (__sync_val_compare_and_swap(armed, threshold, 0) != threshold)
		return;
	send_record(key, now, value, typical);
}

SEC("uprobe")
int BPF_KPROBE(dp_count_call)
{
	struct dp_cc_key key = key_now(ctx);

	count_one(&key, 0, 0);
	return 0;
}

/*
 * A duration or gap measured: past the limit it counts (and is not folded
 * into the typical value); else it moves the typical value. Threads update
 * samples and typical_ns without a lock: two samples at once may fold in
 * as one, which a moving average can afford.
 */
static __always_inline void sample(const struct dp_cc_key *key, struct dp_tm_state *st, __u64 x)
{
	__u64 n = st->samples, typical = st->typical_ns;
	bool crossed;

	if (st->mult_milli)
		crossed = n >= DP_TM_WARMUP && typical && x * 1000 > typical * st->mult_milli;
	else
		crossed = st->limit_ns && x > st->limit_ns;
	if (crossed) {
		count_one(key, x, typical);
		return;
	}
	if (n < DP_TM_WARMUP)
		typical = (typical * n + x) / (n + 1);
	else
		typical = typical - (typical >> DP_TM_EWMA_SHIFT) + (x >> DP_TM_EWMA_SHIFT);
	st->typical_ns = typical;
	st->samples = n + 1;
}

/*
 * slow: entry. Only a thread's outermost call is timed: a depth counter
 * per (thread, probe), the entry time taken when it goes from 0 to 1, so a
 * recursive function's inner calls neither restart nor end the timing.
 */
SEC("uprobe")
int BPF_KPROBE(dp_slow_entry)
{
	struct dp_cc_key key = key_now(ctx);
	struct dp_tm_thread th = { .tid = (__u32)bpf_get_current_pid_tgid(), .probe_id = key.probe_id };
	struct dp_tm_state *st = bpf_map_lookup_elem(&timing, &key);
	struct dp_tm_depth *d, fresh = { .depth = 1 };

	if (!st)
		return 0;
	d = bpf_map_lookup_elem(&depth, &th);
	if (!d || d->gen != st->gen) {
		fresh.entry_ns = bpf_ktime_get_ns();
		fresh.gen = st->gen;
		bpf_map_update_elem(&depth, &th, &fresh, BPF_ANY);
		return 0;
	}
	if (d->depth++ == 0) /* the thread's own entry: no other thread writes it */
		d->entry_ns = bpf_ktime_get_ns();
	return 0;
}

/* slow: return: the outermost call's duration. */
SEC("uretprobe")
int BPF_KRETPROBE(dp_slow_return)
{
	struct dp_cc_key key = key_now(ctx);
	struct dp_tm_thread th = { .tid = (__u32)bpf_get_current_pid_tgid(), .probe_id = key.probe_id };
	struct dp_tm_depth *d = bpf_map_lookup_elem(&depth, &th);
	struct dp_tm_state *st = bpf_map_lookup_elem(&timing, &key);
	__u64 now = bpf_ktime_get_ns();

	if (!d || !st || d->gen != st->gen || d->depth == 0)
		return 0; /* entered before this attach, or evicted */
	if (--d->depth)
		return 0;
	sample(&key, st, now - d->entry_ns);
	return 0;
}

/* gap: and stall: entry: the time since the process's previous call, from any thread. */
SEC("uprobe")
int BPF_KPROBE(dp_gap_entry)
{
	struct dp_cc_key key = key_now(ctx);
	struct dp_tm_state *st = bpf_map_lookup_elem(&timing, &key);
	__u64 now = bpf_ktime_get_ns(), prev;

	if (!st)
		return 0;
	prev = __sync_lock_test_and_set(&st->last_ns, now);
	__sync_fetch_and_add(&st->calls, 1);
	if (prev && now > prev)
		sample(&key, st, now - prev);
	return 0;
}
