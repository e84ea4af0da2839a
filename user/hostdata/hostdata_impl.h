/* SPDX-License-Identifier: MIT */
/* Inside user/hostdata/: one window's collected data (see hostdata.h). */
#ifndef DYNPROF_HOSTDATA_IMPL_H
#define DYNPROF_HOSTDATA_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "dynprof/osrt.h"

/* Calls kept per window (56 bytes each: 112 MiB at most); past it they are counted lost. */
#define HD_MAX_CALLS (2u << 20)
/* Threads sampled per cpu block; past it the rest of the block is left out (counted). */
#define HD_MAX_THREADS 4096
#define HD_SAMPLE_NS 20000000ull /* msprof's 20 ms, 50 Hz */
#define HD_READ_NS 10000000ull   /* ring buffer read period */

struct hd_window {
	int pid;
	unsigned what; /* HOSTSYS_* bits */
	bool stopped;
	uint64_t opened_mono; /* CLOCK_MONOTONIC ns at open: the records' clock */
	uint64_t opened_raw;  /* CLOCK_MONOTONIC_RAW ns at open */
	int64_t mono_minus_raw;
	char comm[16]; /* the process's, at open */
	struct dp_osrt_call *calls;
	size_t ncalls, cap;
	uint64_t kernel_lost; /* the ring buffer was full */
	uint64_t over_cap;    /* past HD_MAX_CALLS, or out of memory */
	FILE *cpu, *mem;      /* the files' text so far (temporary files) */
	uint64_t cpu_blocks, mem_lines, sample_fails, threads_left_out;
	char osrt_why[256];   /* why osrt was not collected ("" when it was) */
	char sample_why[256]; /* the first sample that failed */
};

/* One cpu and/or mem sample of w now (hostsample.c). */
void hd_sample(struct hd_window *w, const char *uptime);

/* Read /proc/uptime's text; 0 or a negative errno. */
int hd_read_small(const char *path, char *buf, size_t len);

/* Write w into <output>/<prof> and print its summary (hostwrite.c). */
void hd_write(struct hd_window *w, const char *output, const char *prof, bool first);

/* The summary line in the console and the file (hostwrite.c). */
void hd_say(const struct hd_window *w, int window_number);

#endif /* DYNPROF_HOSTDATA_IMPL_H */
