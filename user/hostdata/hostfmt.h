/* SPDX-License-Identifier: MIT */
/*
 * The text of msprof's host data files (docs/HOSTDATA.md says the grammar
 * and why each rule is kept): pure functions from a sample or a call to
 * one line or block, so the grammar is tested without a target.
 *
 * Each returns the length written (without the NUL), or -ENOSPC when it
 * does not fit in len, or -EINVAL when the input would make a line msprof
 * drops or that loses a whole slice (said per function).
 */
#ifndef DYNPROF_HOSTFMT_H
#define DYNPROF_HOSTFMT_H

#include <stddef.h>
#include <stdint.h>

#include "shared/compiler.h"

/* A line of any host file is at most this long (a /proc stat line is ~350). */
#define HOSTFMT_LINE_MAX 1024

/*
 * A comm that msprof reads back as one token: a space, ':', '/', '(' or ')'
 * and anything not printable become '_'; an empty one becomes "?". out has
 * room for 16 bytes plus the NUL.
 */
void hostfmt_comm(const char *comm, size_t comm_len, char *out, size_t len);

/*
 * One host_syscall line, as perf trace -T prints a call:
 *   "<start ms>.<6 digits> (<dur ms>.<6 digits> ms): <comm>/<tid> <name>(arg0: <a>) = <ret>"
 * Times are ns of one clock. Every call gets an argument (msprof drops a
 * call without one). -EINVAL: name empty or not one token.
 */
int hostfmt_syscall_line(char *buf, size_t len, uint64_t start_ns, uint64_t dur_ns, const char *comm,
			 uint32_t tid, const char *name, uint64_t arg0, int64_t ret) DP_MUST_CHECK;

/*
 * The first line of a host_syscall file: msprof pins the first line it
 * parses to start_info's clockMonotonicRaw and places every later line by
 * its offset from it, so this line is stamped at that instant, under a
 * name msprof then drops (clock_gettime).
 */
int hostfmt_syscall_anchor(char *buf, size_t len, uint64_t raw_ns, const char *comm,
			   uint32_t tid) DP_MUST_CHECK;

/*
 * The head of one host_cpu block: "time <raw ns>\n<uptime s> <idle s>\n",
 * from /proc/uptime's text. -EINVAL: the uptime text is not two numbers.
 */
int hostfmt_cpu_head(char *buf, size_t len, uint64_t raw_ns, const char *uptime) DP_MUST_CHECK;

/*
 * One thread's line of a host_cpu block from its /proc/<pid>/task/<tid>/stat
 * text: the comm between the first '(' and the last ')' made one token
 * (a space there splits the fields and msprof loses the whole slice), one
 * line ending in '\n'. -EINVAL: not a stat line (no "(...)", fewer than
 * the 39 fields msprof reads, or empty: a blank line also loses the slice).
 */
int hostfmt_cpu_thread(char *buf, size_t len, const char *stat) DP_MUST_CHECK;

/*
 * One host_mem line: "<raw ns> <the 7 numbers of /proc/<pid>/statm>\n".
 * -EINVAL: statm's text is not 7 numbers.
 */
int hostfmt_mem_line(char *buf, size_t len, uint64_t raw_ns, const char *statm) DP_MUST_CHECK;

/* One system call's totals over a window, for the strace -c like summary. */
struct hostfmt_callstat {
	const char *name;
	uint64_t calls, errors, total_ns, max_ns;
};

/*
 * Sort by total time (then calls), largest first; the summary's order.
 */
void hostfmt_callstat_sort(struct hostfmt_callstat *st, size_t n);

/* The summary's header line, and the line of one system call (sorted first). */
int hostfmt_summary_head(char *buf, size_t len) DP_MUST_CHECK;
int hostfmt_summary_line(char *buf, size_t len, const struct hostfmt_callstat *st,
			 uint64_t all_ns) DP_MUST_CHECK;

#endif /* DYNPROF_HOSTFMT_H */
