// SPDX-License-Identifier: MIT
/*
 * A window's host data into the run's trace (--trace=on; see
 * report/trace_out.h): each system call on its thread's lane, the
 * process's cpu use and resident memory as counters, and lost records as
 * an instant. The same records as the host files, on CLOCK_MONOTONIC.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "config/hostsys.h"
#include "hostdata/hostdata_impl.h"
#include "report/trace_out.h"
#include "shared/decimal.h"

void hd_trace(struct hd_window *w, bool sorted)
{
	char nrbuf[32], text[160];

	if (!trace_enabled() || !(w->what & HOSTSYS_OSRT) || w->osrt_why[0])
		return;
	if (!sorted)
		hd_sort_calls(w);
	for (size_t i = 0; i < w->ncalls; i++) {
		const struct dp_osrt_call *c = &w->calls[i];
		char comm[sizeof(c->comm) + 1];

		snprintf(comm, sizeof(comm), "%.*s", (int)sizeof(c->comm), c->comm);
		trace_thread(w->pid, c->tid, comm);
		trace_call(w->pid, c->tid, hd_call_name(c->nr, nrbuf, sizeof(nrbuf)), c->entry_ns,
			   c->dur_ns);
	}
	trace_calls_end(w->pid);
	if (w->kernel_lost + w->over_cap) {
		snprintf(text, sizeof(text),
			 "%" PRIu64 " (the kernel's ring buffer was full), %" PRIu64 " (past the limit)",
			 w->kernel_lost, w->over_cap);
		trace_instant(w->pid, "system call records lost", "lost", text);
	}
}

void hd_trace_cpu(struct hd_window *w, uint64_t raw_ns, uint64_t ticks)
{
	static long hz;
	uint64_t dt = raw_ns - w->trace_raw;

	if (!hz)
		hz = sysconf(_SC_CLK_TCK) > 0 ? sysconf(_SC_CLK_TCK) : 100;
	/* The first sample has nothing before it; a thread that ended takes its ticks along. */
	if (w->trace_raw && dt && ticks >= w->trace_ticks)
		trace_counter(w->pid, "cpu %", raw_ns + (uint64_t)w->mono_minus_raw,
			      (double)(ticks - w->trace_ticks) * 1e11 / (double)hz / (double)dt);
	w->trace_raw = raw_ns;
	w->trace_ticks = ticks;
}

void hd_trace_mem(const struct hd_window *w, uint64_t raw_ns, const char *statm)
{
	const char *p = statm;
	uint64_t pages;
	size_t n = 0;

	/* statm: size resident shared text lib data dt (pages); the second is the resident set. */
	while (*p && *p != ' ')
		p++;
	while (*p == ' ')
		p++;
	while (p[n] >= '0' && p[n] <= '9')
		n++;
	if (n && !decimal_span(p, n, 0, UINT64_MAX / 65536, &pages))
		trace_counter(w->pid, "memory MiB", raw_ns + (uint64_t)w->mono_minus_raw,
			      (double)pages * (double)sysconf(_SC_PAGESIZE) / (1024.0 * 1024.0));
}
