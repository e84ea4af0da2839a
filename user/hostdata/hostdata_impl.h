/* SPDX-License-Identifier: MIT */
/* Inside user/hostdata/: one window's collected data (see hostdata.h). */
#ifndef DYNPROF_HOSTDATA_IMPL_H
#define DYNPROF_HOSTDATA_IMPL_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "dynprof/osrt.h"
#include "hostdata/hostfmt.h"
#include "shared/compiler.h"

/* Calls kept per window (56 bytes each: 112 MiB at most); past it they are counted lost. */
#define HD_MAX_CALLS (2u << 20)
/* Threads sampled per cpu block; past it the rest of the block is left out (counted). */
#define HD_MAX_THREADS 4096
#define HD_SAMPLE_NS 20000000ull /* msprof's 20 ms, 50 Hz */
#define HD_READ_NS 10000000ull   /* ring buffer read period */

struct bpf_link;

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
	bool by_thread;       /* calls sorted by thread (the summary's), not by entry time */
	uint64_t kernel_lost; /* the ring buffer was full */
	uint64_t over_cap;    /* past HD_MAX_CALLS, or out of memory */
	FILE *cpu, *mem;      /* the files' text so far (temporary files) */
	FILE *disk, *net;
	uint64_t cpu_blocks, mem_lines, sample_fails, threads_left_out;
	uint64_t net_blocks, disk_rows;
	/* The last disk reading counted into rows; the first sample's time is row 0's. */
	bool disk_base;
	uint64_t disk_rb, disk_wb, disk_io, disk_start_raw;
	bool iowait_on; /* its pid is watched by bpf/iowait.bpf.c for it (its own, or its keeper's) */
	unsigned uid;   /* the process's, at open (iotop's USER column) */
	uint64_t trace_ticks, trace_raw; /* the last cpu sample's ticks and time, for the trace */
	char osrt_why[256];              /* why osrt was not collected ("" when it was) */
	struct bpf_link *pth_links[DP_OSRT_PTH_NFUNCS][2]; /* the pthread probes (pthprobe.c) */
	char pth_lib[PATH_MAX];       /* the library probed, as the target sees it */
	char pth_why[PATH_MAX + 320]; /* why no pthread calls were recorded */
	char sample_why[256];         /* the first sample that failed */
	uint64_t last_raw;            /* the last sample's time (hostsample.c) */
	/* --host-sys-before (hostkeep.c): the span's start, from the target's kept data. */
	uint64_t begin_mono, begin_raw; /* = opened_* without it */
	bool kept;                      /* its process is watched and probed from its join */
	bool keeper;                    /* this is a keeper's own (no trace counters) */
	uint64_t kernel_base;           /* the process's kernel loss count at the open */
	uint64_t before_dropped;        /* calls of the span pushed out of the keeper by its cap */
	uint64_t before_samples_dropped;
	uint64_t before_calls, before_samples; /* what the keeper gave it */
};

/*
 * --host-sys-before: a target's host data of the last keep_ns, from its
 * join to its leaving, bounded by these caps (docs/HOSTDATA.md). A record
 * pushed out by a cap while still within keep_ns is counted where it
 * began, so a window learns how many of its span's records were dropped.
 */
#ifndef HD_KEEP_MAX_CALLS
#define HD_KEEP_MAX_CALLS (512u << 10) /* 56 bytes each: 28 MiB a target at most */
#endif
#define HD_KEEP_MAX_SAMPLES 16384 /* cpu, mem, network, disk samples (4 x 50 Hz x 60 s: 12000) */
#define HD_KEEP_MAX_SAMPLE_BYTES (32u << 20) /* their text */
#define HD_DROP_SLOTS 1024

/* Counts by when, over the last keep_ns, in HD_DROP_SLOTS slots of gran_ns. */
struct hd_drops {
	uint64_t gran_ns;
	uint64_t slot[HD_DROP_SLOTS]; /* slot number + 1; 0: never used */
	uint64_t n[HD_DROP_SLOTS];
};

struct hd_kept_sample {
	uint64_t raw;
	unsigned kind; /* HOSTSYS_CPU, _MEM or _NET */
	size_t len;
	char *text;
};

struct hd_keep {
	struct hd_window w; /* its probes, watch, and the scratch files its samples pass through */
	uint64_t keep_ns;
	struct dp_osrt_call *ring; /* the calls, oldest at head */
	size_t cap, head, n;
	struct hd_kept_sample *samples; /* a ring as well */
	size_t scap, shead, sn, sbytes;
	uint64_t kernel_seen; /* the process's kernel loss count last read */
	struct hd_drops dropped, sdropped, klost;
};

/* A keeper of pid's `what`, keeping keep_ns (its scratch files opened); NULL: no memory. */
struct hd_keep *hd_keep_new(int pid, unsigned what, uint64_t keep_ns);
void hd_keep_free(struct hd_keep *k);
/* A completed call of its process, kept (the oldest pushed out past the cap). */
void hd_keep_call(struct hd_keep *k, const struct dp_osrt_call *c);
/* One cpu, mem and network sample, kept. */
void hd_keep_sample(struct hd_keep *k, const char *uptime);
/* The process's kernel loss count now (its growth counted as of now_mono). */
void hd_keep_lost(struct hd_keep *k, uint64_t total, uint64_t now_mono);
/* What k holds since w->begin_mono into w (calls, samples, the drops among them). */
void hd_keep_give(struct hd_keep *k, struct hd_window *w, uint64_t now_mono);

/* Probe w's pthread functions (pthprobe.c); on failure none is, and pth_why says why. */
void hd_pth_attach(struct hd_window *w);
/* Close w's pthread probes (in the background). */
void hd_pth_detach(struct hd_window *w);
/* The pthread function of a record's nr (DP_OSRT_IS_PTH). */
const char *hd_pth_name(uint32_t nr);

/* One cpu, mem, disk and/or network sample of w now (hostsample.c). */
void hd_sample(struct hd_window *w, const char *uptime);

/* A disk reading of a process: its counters, each cumulative. */
struct hd_disk_reading {
	uint64_t rb, wb; /* storage read and written bytes (/proc/<pid>/io) */
	uint64_t io_ns;  /* its iowait sleeps (iowait.h); HOSTFMT_IO_UNKNOWN: not measured */
};

/*
 * w's process's reading now; 0 or -errno. io_ns is measured while w's pid
 * is watched and no swap area is on (then none of it is swapping in).
 */
int hd_disk_read(const struct hd_window *w, struct hd_disk_reading *r) DP_MUST_CHECK;
/* One such reading at raw into w's host_disk rows (the first: row 0's time). */
void hd_disk_take(struct hd_window *w, uint64_t raw, const struct hd_disk_reading *r);

/* host_disk's last line (start_time), once w has stopped (hostsample.c). */
void hd_disk_finish(struct hd_window *w);

/* Read /proc/uptime's text; 0 or a negative errno. */
int hd_read_small(const char *path, char *buf, size_t len);

/* Write w into <output>/<prof> and print its summary (hostwrite.c). */
void hd_write(struct hd_window *w, const char *output, const char *prof, bool first);

/* A system call's name by number ("syscall_N" when unknown), buf its room (hostwrite.c). */
const char *hd_syscall_name(uint32_t nr, char *buf, size_t len);

/* A record's call name: a pthread function's, else the system call's (hostwrite.c). */
const char *hd_call_name(uint32_t nr, char *buf, size_t len);

/* w's calls in entry order (hostwrite.c). */
void hd_sort_calls(struct hd_window *w);

/*
 * w's calls into the run's trace (report/trace_out.h), sorted first unless
 * `sorted`, and its losses as an instant (hosttrace.c).
 */
void hd_trace(struct hd_window *w, bool sorted);

/* The trace's cpu and memory counters of a sample: ticks over w's threads, statm's text. */
void hd_trace_cpu(struct hd_window *w, uint64_t raw_ns, uint64_t ticks);
void hd_trace_mem(const struct hd_window *w, uint64_t raw_ns, const char *statm);
struct cJSON;
/*
 * w's calls per thread and call (count, errors, total and longest time),
 * for the window-close event (hostsum.c). Sorts w->calls by thread: call
 * after the files are written. NULL: out of memory.
 */
struct cJSON *hd_summary_json(struct hd_window *w);

/* The summary line in the console and the file (hostwrite.c). */
void hd_say(const struct hd_window *w, int window_number);

#endif /* DYNPROF_HOSTDATA_IMPL_H */
