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
 * One host_pthreadcall line, as ltrace -ttt -T prints a call:
 *   "[pid <tid>] <start s>.<9 digits> <lib>-><func>(0x<arg0 hex>) = <ret> <<dur s>.<9 digits>>"
 * msprof splits it at blanks: "[pid" and "<tid>]" first, the time third,
 * "<lib>->func(" fourth, the duration in <> last. -EINVAL: lib or func empty
 * or not one token (a blank would shift every field).
 */
int hostfmt_pthread_line(char *buf, size_t len, uint64_t start_ns, uint64_t dur_ns, uint32_t tid,
			 const char *lib, const char *func, uint64_t arg0, int64_t ret) DP_MUST_CHECK;

/*
 * The first line of a host_pthreadcall file: msprof pins the first line it
 * parses (even one it then drops) to start_info's instant, so this one is
 * stamped there, as pthread_once, the one name msprof skips.
 */
int hostfmt_pthread_anchor(char *buf, size_t len, uint64_t raw_ns, uint32_t tid,
			   const char *lib) DP_MUST_CHECK;

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

/* "time <raw ns>\n": the head of one host_network block. */
int hostfmt_net_head(char *buf, size_t len, uint64_t raw_ns) DP_MUST_CHECK;

/*
 * One interface's line of a host_network block: " <name>: <16 numbers>\n".
 * msprof splits it at blanks, takes the name from the first word less its
 * last character (the ':'), rx bytes from the second and tx bytes from the
 * tenth word. The line always begins with a blank: msprof reads any line
 * that begins with "time" as a block's head, so an interface named
 * "time0" at the line's start would be taken as a stamp. -EINVAL: a name
 * that is empty, longer than 15, or has a blank, ':' or an unprintable
 * character (it would not be one word).
 */
int hostfmt_net_line(char *buf, size_t len, const char *name, const uint64_t v[16]) DP_MUST_CHECK;

/* io_ns of a period not measured (see hostfmt_disk_row). */
#define HOSTFMT_IO_UNKNOWN UINT64_MAX

/*
 * One host_disk row, as iotop -b -t -P prints a process:
 *   "HH:MM:SS <pid> ? <uid> <read> B/s <write> B/s 0.00 % <io> % <comm>\n"
 * with the rates of read_bytes and write_bytes over dur_ns (2 decimals)
 * and io the share of dur_ns that io_ns is (its threads' iowait sleeps
 * summed, 2 decimals, at most 99.99 as iotop prints it). Swapin is 0.00:
 * the caller passes an io_ns only while no swap area is on, when nothing
 * can be swapped in. io_ns HOSTFMT_IO_UNKNOWN: "?unavailable?" instead of
 * both, what iotop prints without delay accounting, and msprof takes both
 * as 0. msprof ignores the time of day and places row i at start_time + i
 * periods; it needs word 1 all digits and at least 8 words, reads a unit
 * other than B/s, K/s, M/s, G/s as K/s, and takes swapin and io as 0 on a
 * line holding "unavailable" anywhere: a comm holding it gets a capital
 * U. The priority is not read ("?"). The comm is made one word. -EINVAL:
 * dur_ns 0 or pid not positive.
 */
int hostfmt_disk_row(char *buf, size_t len, unsigned sec_of_day, int pid, unsigned uid,
		     uint64_t read_bytes, uint64_t write_bytes, uint64_t io_ns, uint64_t dur_ns,
		     const char *comm) DP_MUST_CHECK;

/*
 * The host_disk rows due at now_ns on the grid of `period` ns from row 0's
 * start: the periods begun by then, rounded to the nearest (a sample a
 * little early or late still closes its period). 0 before start.
 */
uint64_t hostfmt_disk_due(uint64_t start_ns, uint64_t now_ns, uint64_t period);

/*
 * Row i's share of `bytes` spread over k rows (0 <= i < k): the rows sum to
 * exactly `bytes`, none differing by more than one.
 */
uint64_t hostfmt_disk_share(uint64_t bytes, uint64_t k, uint64_t i);

/* "start_time <raw ns>\n": the last line of a host_disk file, the instant of row 0. */
int hostfmt_disk_start(char *buf, size_t len, uint64_t raw_ns) DP_MUST_CHECK;

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
