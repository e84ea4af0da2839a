/* SPDX-License-Identifier: MIT */
/*
 * Counting a function's calls in a target, in the kernel: a uprobe on the
 * function in the library the target has mapped, a counter per (target,
 * probe) in a BPF map, and a ring-buffer event only when the counter
 * reaches an armed threshold -- never one event per call.
 *
 * A probe is (pid, probe_id): probe_id is the caller's number for one
 * LIB:SYMBOL pair; counts start at 0 when the probe is attached. Several
 * thresholds may be armed on one probe; the kernel holds the lowest, and
 * the next is armed when it fires.
 *
 * Timed probes (callcount_watch_timed) measure calls in the kernel instead:
 * a slow: probe's duration (uprobe + uretprobe), a gap: or stall: probe's
 * time between calls; the counter then counts the calls past the limit.
 * The breakpoint goes where kernel/probeplace.h chooses (past an endbr64).
 *
 * Costs measured on Linux 6.18 (a 2-core VM): each counted call costs the
 * target a uprobe trap, ~10 us when the probed instruction is
 * single-stepped, ~0.6 us when emulated (a push), a uretprobe about as
 * much again (docs/BENCHMARKS.md); an empty function: 1.7 ns unprobed; so
 * probe functions called thousands of times a second, not millions;
 * attaching takes ~0.1 ms (the first probe of a process 5-30 ms);
 * detaching ~100 ms per probe, serialized in the kernel, which is why
 * callcount_forget hands the detaching to a thread.
 * Single-threaded use: one caller thread for all functions.
 *
 * Errors: convention 1 of docs/ERRORS.md; callcount_open, _watch and
 * _check_file add convention 2 (one line in the caller's err buffer).
 */
#ifndef DYNPROF_CALLCOUNT_H
#define DYNPROF_CALLCOUNT_H

#include <stddef.h>
#include <stdint.h>

#include "shared/compiler.h"

struct callcount;

enum callcount_state {
	CALLCOUNT_ATTACHED = 0, /* counting */
	CALLCOUNT_NOT_MAPPED = 1, /* LIB not (yet) mapped in the target: callcount_refresh() retries */
};

/*
 * Load the BPF side. NULL with a one-line reason in err when it cannot be
 * used (not root, no kernel BTF, not in the initial pid namespace, or the
 * step that failed with libbpf's first message).
 */
struct callcount *callcount_open(char *err, size_t errlen);
/* Detach everything and unload; waits for every link to close (~100 ms each). */
void callcount_close(struct callcount *cc);

/* The ring buffer's fd to poll (POLLIN: call callcount_consume). */
int callcount_fd(const struct callcount *cc);

/*
 * Count calls of `symbol` in `lib` (a path as the target sees it, or a
 * library name matched against the basenames of the target's file
 * mappings: "libfoo.so" matches libfoo.so, libfoo.so.1, libfoo.so.1.2;
 * "demo_task" the executable) in process `pid` (host pid). The file is
 * reached through /proc/<pid>/root, so targets in containers work.
 * Returns CALLCOUNT_ATTACHED, CALLCOUNT_NOT_MAPPED (a path must exist in
 * the target's filesystem and hold the symbol even then), or a negative
 * errno with one line in err:
 *   -ENOENT   the symbol is not a function in the library, or the library
 *             path does not exist
 *   -ESRCH    no such process
 *   -ENOTSUP  the symbol is an IFUNC (memcpy, strlen...: the function called
 *             is chosen at load time)
 *   -ENOEXEC  the file is not an ELF executable or library
 *   -ESTALE   the library is mapped from a file deleted or replaced since
 *   -EEXIST   (pid, probe_id) is already watched
 *   -ENOSPC   DP_CC_MAX_PROBES probes are counted already
 *   others from the kernel (the attach step, with libbpf's message)
 */
int callcount_watch(struct callcount *cc, int pid, unsigned probe_id, const char *lib,
		    const char *symbol, char *err, size_t errlen) DP_MUST_CHECK;

/*
 * A timed probe (slow:, gap:, stall:): kind is enum dp_tm_kind of
 * dynprof/callcount.h (0: calls counted, as callcount_watch), the limit
 * limit_ns or mult_milli (a multiple of the typical value, 1/1000). Its
 * counter, thresholds and `fired` count the calls (or gaps) past the
 * limit; a stall: probe's never moves (user space reads last_ns).
 */
struct callcount_timing {
	int kind;
	uint64_t limit_ns;
	uint32_t mult_milli;
};
/* callcount_watch for a timed probe; t NULL: a plain count. */
int callcount_watch_timed(struct callcount *cc, int pid, unsigned probe_id, const char *lib,
			  const char *symbol, const struct callcount_timing *t, char *err,
			  size_t errlen) DP_MUST_CHECK;

/* A timed probe's measurements now (CLOCK_MONOTONIC ns). */
struct callcount_typical {
	uint64_t samples;    /* durations or gaps measured (not past the limit) */
	uint64_t typical_ns; /* their moving average (dynprof/callcount.h) */
	uint64_t last_ns;    /* gap, stall: the latest call's entry; 0: none since the attach */
	uint64_t calls;      /* gap, stall: calls since the attach */
};
/* 0, or -ENOENT: no such timed probe attached. */
int callcount_timing_read(const struct callcount *cc, int pid, unsigned probe_id,
			  struct callcount_typical *out) DP_MUST_CHECK;

/*
 * Arm a threshold (an absolute count since the probe was attached): 0, or
 * -ENOENT no such probe, -EINVAL threshold 0, -ENOSPC too many (4096).
 * A pending probe keeps it until attached. One the count has already
 * passed fires at the probe's next call; the same value twice is one.
 */
int callcount_arm(struct callcount *cc, int pid, unsigned probe_id, uint64_t threshold) DP_MUST_CHECK;

/* The probe's count now (0 when it is not attached). */
uint64_t callcount_read(struct callcount *cc, int pid, unsigned probe_id);

/*
 * Called from callcount_refresh and callcount_consume. A handler may call
 * callcount_arm, _watch, _read and _forget (not _consume, _refresh, _close).
 */
struct callcount_fire {
	uint64_t count;    /* the counter then */
	uint64_t ktime_ns; /* when (CLOCK_MONOTONIC) */
	uint64_t value_ns; /* timed probes: the duration or gap that crossed the limit; 0: not known */
	uint64_t typical_ns; /* timed probes: the typical value then (0: none yet, or not known) */
};

struct callcount_handlers {
	/* A threshold was reached. */
	void (*fired)(void *ctx, int pid, unsigned probe_id, const struct callcount_fire *f);
	void (*attached)(void *ctx, int pid, unsigned probe_id, const char *path);
	void (*failed)(void *ctx, int pid, unsigned probe_id, const char *why);
	void *ctx;
};

/*
 * Retry NOT_MAPPED probes (a library dlopen'd since). `attached` is called
 * for each that is now counting (path as the target sees it), `failed`
 * (with one line) for each that can never count and is dropped: the
 * library came and the symbol is not in it, or the process exited. A
 * target's maps are read only when its size changed (a dlopen maps
 * memory), and at least once a second.
 */
void callcount_refresh(struct callcount *cc, const struct callcount_handlers *h);

/*
 * Read the ring buffer: handlers->fired once per report. Thresholds the
 * count passed together are one report, with that count: the caller
 * compares it with its own thresholds. The next threshold is then armed;
 * when the count is already past it, it is reported here too, with the
 * count read then. Records lost to a full ring are made up for from the
 * counters. h may be NULL: thresholds reached then go unreported.
 */
void callcount_consume(struct callcount *cc, const struct callcount_handlers *h);

/* Pending NOT_MAPPED probes exist: the caller should call callcount_refresh every CALLCOUNT_REFRESH_MS. */
int callcount_pending(const struct callcount *cc);
#define CALLCOUNT_REFRESH_MS 20

/*
 * Forget every probe of `pid` (it left the session): returns at once, its
 * counters gone; the uprobes are detached by a background thread (~100 ms
 * each). Watching the same (pid, probe_id) again waits for its old link.
 */
void callcount_forget(struct callcount *cc, int pid);

/*
 * Check before anything starts that `symbol` is in the ELF file at `path`
 * (.dynsym or .symtab, a function with an address): 0, or with one line in
 * err -ENOENT (no file, no such function), -ENOTSUP (an IFUNC), -ENOEXEC
 * (not ELF), -errno.
 */
int callcount_check_file(const char *path, const char *symbol, char *err, size_t errlen) DP_MUST_CHECK;

/*
 * Check before anything starts that `symbol` can be counted in process
 * `pid`: 0 when LIB is mapped and holds it, or is a name not loaded yet
 * (only waiting tells), or the process cannot be read (its join says why);
 * else, with one line in err, what callcount_check_file returns (a LIB
 * path that does not exist in the process's filesystem, no such function).
 */
int callcount_check_pid(int pid, const char *lib, const char *symbol, char *err,
			size_t errlen) DP_MUST_CHECK;

/* `err` without its leading "pid PID: " (for lines that already name the pid). */
const char *callcount_err_text(const char *err, int pid);

#endif /* DYNPROF_CALLCOUNT_H */
