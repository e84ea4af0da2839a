/* SPDX-License-Identifier: MIT */
/*
 * --trace=on: one Chrome Trace Event file per run (the JSON array form,
 * which Perfetto, chrome://tracing and speedscope read; docs/TRACE.md), so a
 * run's windows can be seen on a timeline without CANN's tools:
 *   - a process per target (its host pid; named "pid P: COMMAND [container]"),
 *     a thread lane "dynprof windows" (tid 0) with each window as a slice
 *     named by its fate, and the trigger firings and errors as instants with
 *     what was measured;
 *   - with --host-sys=osrt, each system call as a slice on its thread (named
 *     by its comm); with cpu/mem, counters.
 * Bounded so a busy target's trace still loads: a call shorter than the
 * fold threshold is not a slice but counted, per process and 10 ms
 * interval, in a counter; past TRACE_MAX_SLICES slices every further call
 * is counted so. The rule is printed by the caller (trace_rule) and
 * written into the file.
 *
 * The file's fd is the caller's to open (results/output.c, in --output);
 * every function is a no-op until trace_open succeeded; all of them may be
 * called from any thread (one lock). Text from a target is escaped
 * (report/escape.h), so the file is ASCII.
 */
#ifndef DYNPROF_TRACE_OUT_H
#define DYNPROF_TRACE_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/compiler.h"

#define TRACE_DEFAULT_FOLD_NS 100000ull    /* calls under 100 us are counted, not drawn */
#define TRACE_FOLD_INTERVAL_NS 10000000ull /* the counts' interval: 10 ms */
/* ~110 bytes each: ~55 MB of slices at most, far below where viewers fail (~1 GB). */
#define TRACE_MAX_SLICES 500000ull
#define TRACE_WINDOWS_TID 0 /* the lane of a target's windows and instants */

/*
 * Start the trace in fd (taken: closed by trace_close, or here on failure);
 * fold_ns: the fold threshold (0: every call a slice, up to the cap).
 * 0 or a negative errno.
 */
int trace_open(int fd, uint64_t fold_ns) DP_MUST_CHECK;
bool trace_enabled(void);

/* The folding rule in one line (for the console and the docs' wording). */
void trace_rule(char *buf, size_t len);

struct trace_totals {
	uint64_t slices;      /* calls written as slices */
	uint64_t folded;      /* calls counted because shorter than the threshold */
	uint64_t over_cap;    /* calls counted because TRACE_MAX_SLICES was reached */
	uint64_t windows;     /* window slices */
	uint64_t write_error; /* 0, or the errno of the first failed write */
};

/*
 * End windows still open (as "open at end"), write the tail, close the
 * file. totals (may be NULL) gets what was written. 0 or a negative errno
 * (the file is then incomplete).
 */
int trace_close(struct trace_totals *totals) DP_MUST_CHECK;

/* A target joined: its process lane's name. container/command may be NULL. */
void trace_target(int pid, const char *container, const char *command);

/*
 * A window opened / ended at end_ns (CLOCK_MONOTONIC; its stop, before its
 * folder was moved) with its fate ("saved", "incomplete", "lost") and why
 * (NULL: none).
 */
void trace_window_open(int pid);
void trace_window_close(int pid, uint64_t end_ns, const char *fate, const char *reason);

/*
 * An instant on a target's window lane (pid <= 0: dynprof's own lane):
 * name, and one text argument key=text (key NULL: none).
 */
void trace_instant(int pid, const char *name, const char *key, const char *text);

/* A rule fired: the count (call:) or what was measured and the typical value (slow:, gap:, stall:). */
void trace_trigger(int pid, int rule, const char *edge, const char *condition, bool has_count,
		   uint64_t count, bool measured, uint64_t value_ns, uint64_t typical_ns);

/* A thread's lane name (its comm); named once per (pid, tid). */
void trace_thread(int pid, uint32_t tid, const char *comm);

/*
 * One system call of pid's thread tid, CLOCK_MONOTONIC ns, in entry order
 * within a process; trace_calls_end(pid) after the last of a batch (it
 * writes the last interval's count).
 */
void trace_call(int pid, uint32_t tid, const char *name, uint64_t start_ns, uint64_t dur_ns);
void trace_calls_end(int pid);

/* A counter of pid's process lane: series `name` at CLOCK_MONOTONIC ns. */
void trace_counter(int pid, const char *name, uint64_t mono_ns, double value);

#endif /* DYNPROF_TRACE_OUT_H */
