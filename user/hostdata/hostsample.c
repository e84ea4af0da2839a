// SPDX-License-Identifier: MIT
/*
 * One cpu, mem, disk and network sample of a window's process (see
 * hostdata_impl.h): as msprof's own sampler reads them, /proc/uptime and
 * each thread's /proc/<pid>/task/<tid>/stat, /proc/<pid>/statm, and the
 * /proc/net/dev of the process's network namespace (/proc/<pid>/net/dev);
 * for disk, what iotop -P reports, the process's read and write bytes
 * (/proc/<pid>/io: the kernel's sum over its threads, those gone
 * included) and its threads' time asleep on block I/O (iowait.h).
 * Stamped with CLOCK_MONOTONIC_RAW. The text goes through hostfmt (the
 * grammar) into the window's temporary files; a line that would not parse
 * is left out, never written (one bad line loses a whole cpu slice in
 * msprof).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/procstat.h"
#include "config/hostsys.h"
#include "hostdata/hostdata_impl.h"
#include "hostdata/hostfmt.h"
#include "hostdata/iowait.h"
#include "shared/procnet.h"
#include "report/trace_out.h"

/* The whole of a /proc file into buf (len with the NUL); its length, or a negative errno. */
static ssize_t read_all(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t used = 0;
	ssize_t n = 0;

	if (fd < 0)
		return -errno;
	while (used + 1 < len && (n = read(fd, buf + used, len - 1 - used)) > 0)
		used += (size_t)n;
	if (n < 0)
		n = -errno;
	close(fd);
	buf[used] = '\0';
	return n < 0 ? n : (ssize_t)used;
}

int hd_read_small(const char *path, char *buf, size_t len)
{
	ssize_t n = read_all(path, buf, len);

	return n < 0 ? (int)n : 0;
}

static uint64_t raw_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void failed(struct hd_window *w, const char *what, int err)
{
	w->sample_fails++;
	if (!w->sample_why[0])
		snprintf(w->sample_why, sizeof(w->sample_why), "%s: %s", what, strerror(-err));
}

/*
 * Each thread's stat line; a thread gone between the listing and the read
 * is left out. Returns the threads' cpu ticks (the trace's counter).
 */
static uint64_t sample_threads(struct hd_window *w, DIR *d)
{
	char path[96], stat[HOSTFMT_LINE_MAX], line[HOSTFMT_LINE_MAX];
	struct procstat st;
	struct dirent *e;
	uint64_t ticks = 0;
	int n = 0;

	while ((e = readdir(d))) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		if (n++ == HD_MAX_THREADS) {
			w->threads_left_out++;
			break;
		}
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/stat", w->pid, e->d_name);
		if (hd_read_small(path, stat, sizeof(stat)))
			continue;
		if (hostfmt_cpu_thread(line, sizeof(line), stat) > 0)
			fputs(line, w->cpu);
		if (!procstat_parse(stat, &st))
			ticks += st.utime + st.stime;
	}
	return ticks;
}

static void sample_cpu(struct hd_window *w, const char *uptime, uint64_t raw)
{
	char path[64], head[256];
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", w->pid);
	d = opendir(path);
	if (!d) {
		failed(w, "cannot list its threads", -errno);
		return;
	}
	if (hostfmt_cpu_head(head, sizeof(head), raw, uptime) < 0) {
		failed(w, "/proc/uptime", -EINVAL);
	} else {
		uint64_t ticks;

		fputs(head, w->cpu);
		ticks = sample_threads(w, d);
		w->cpu_blocks++;
		if (trace_enabled() && !w->keeper) /* a keeper samples outside windows */
			hd_trace_cpu(w, raw, ticks);
	}
	closedir(d);
}

static void sample_mem(struct hd_window *w, uint64_t raw)
{
	char path[64], statm[256], line[HOSTFMT_LINE_MAX];
	int rc;

	snprintf(path, sizeof(path), "/proc/%d/statm", w->pid);
	rc = hd_read_small(path, statm, sizeof(statm));
	if (!rc)
		rc = hostfmt_mem_line(line, sizeof(line), raw, statm);
	if (rc < 0) {
		failed(w, "/proc/<pid>/statm", rc);
		return;
	}
	fputs(line, w->mem);
	w->mem_lines++;
	if (trace_enabled() && !w->keeper)
		hd_trace_mem(w, raw, statm);
}

/* One host_network block: the head, then each interface line, complete lines only. */
static void sample_net(struct hd_window *w, uint64_t raw)
{
	static char text[65536]; /* the collector's thread only */
	char path[64], line[HOSTFMT_LINE_MAX];
	struct hostproc_netdev d;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/net/dev", w->pid);
	n = read_all(path, text, sizeof(text));
	if (n < 0) {
		failed(w, "/proc/<pid>/net/dev", (int)n);
		return;
	}
	if (hostfmt_net_head(line, sizeof(line), raw) < 0)
		return;
	fputs(line, w->net);
	/* A line cut by the buffer's end is left out: its last number would read short. */
	for (char *p = text, *nl; (nl = memchr(p, '\n', (size_t)(text + n - p))); p = nl + 1)
		if (!hostproc_parse_netdev(p, (size_t)(nl - p), &d) &&
		    hostfmt_net_line(line, sizeof(line), d.name, d.v) > 0)
			fputs(line, w->net);
	w->net_blocks++;
}

static unsigned sec_of_day(void)
{
	time_t now = time(NULL);
	struct tm tm;

	if (!localtime_r(&now, &tm))
		return 0;
	return (unsigned)(tm.tm_hour * 3600 + tm.tm_min * 60 + tm.tm_sec);
}

/* Whether a swap area is on (/proc/swaps lists one), read at most once a sample period. */
static bool swap_on(uint64_t raw)
{
	static uint64_t read_raw;
	static bool on = true;
	char text[256];

	if (read_raw && raw - read_raw < HD_SAMPLE_NS / 2)
		return on;
	read_raw = raw;
	/* Unreadable: swap-ins cannot be ruled out. A header line only: no area. */
	on = hd_read_small("/proc/swaps", text, sizeof(text)) || strchr(text, '\n') == NULL ||
	     strchr(text, '\n')[1] != '\0';
	return on;
}

/*
 * k host_disk rows holding what was counted since the last counted sample
 * (d's io_ns HOSTFMT_IO_UNKNOWN: not measured): msprof places row i at
 * start_time + i periods, so one row per period, none skipped; bytes and
 * iowait are shared out so the rows sum to exactly what was counted.
 */
static void disk_rows(struct hd_window *w, uint64_t k, const struct hd_disk_reading *d)
{
	char line[HOSTFMT_LINE_MAX];
	unsigned sod = sec_of_day();

	for (uint64_t i = 0; i < k; i++) {
		uint64_t r = hostfmt_disk_share(d->rb, k, i), wr = hostfmt_disk_share(d->wb, k, i);
		uint64_t io = d->io_ns == HOSTFMT_IO_UNKNOWN ? HOSTFMT_IO_UNKNOWN :
							       hostfmt_disk_share(d->io_ns, k, i);

		if (hostfmt_disk_row(line, sizeof(line), sod, w->pid, w->uid, r, wr, io,
				     HD_SAMPLE_NS, w->comm) < 0)
			continue;
		fputs(line, w->disk);
		w->disk_rows++;
	}
}

int hd_disk_read(const struct hd_window *w, struct hd_disk_reading *r)
{
	char path[64], text[1024];
	int rc;

	snprintf(path, sizeof(path), "/proc/%d/io", w->pid);
	rc = hd_read_small(path, text, sizeof(text));
	if (!rc)
		rc = hostproc_parse_io(text, strlen(text), &r->rb, &r->wb);
	if (rc || !w->iowait_on || swap_on(raw_now()) || iowait_read((uint32_t)w->pid, &r->io_ns))
		r->io_ns = HOSTFMT_IO_UNKNOWN;
	return rc;
}

/* Since the last reading; what went back (not a real counter's way) counts nothing. */
static uint64_t grown(uint64_t now, uint64_t before)
{
	return now >= before ? now - before : 0;
}

void hd_disk_take(struct hd_window *w, uint64_t raw, const struct hd_disk_reading *r)
{
	struct hd_disk_reading d;
	uint64_t n;

	if (!w->disk_base) { /* the first reading: row 0 begins here */
		w->disk_base = true;
		w->disk_start_raw = raw;
	} else {
		/* The rows due by now on the 20 ms grid from row 0; early: counted next time. */
		n = hostfmt_disk_due(w->disk_start_raw, raw, HD_SAMPLE_NS);
		if (n <= w->disk_rows)
			return;
		d.rb = grown(r->rb, w->disk_rb);
		d.wb = grown(r->wb, w->disk_wb);
		/* Measured at both ends, or not known for these rows. */
		d.io_ns = r->io_ns == HOSTFMT_IO_UNKNOWN || w->disk_io == HOSTFMT_IO_UNKNOWN ?
				  HOSTFMT_IO_UNKNOWN :
				  grown(r->io_ns, w->disk_io);
		disk_rows(w, n - w->disk_rows, &d);
	}
	w->disk_rb = r->rb;
	w->disk_wb = r->wb;
	w->disk_io = r->io_ns;
}

static void sample_disk(struct hd_window *w, uint64_t raw)
{
	struct hd_disk_reading r;
	int rc = hd_disk_read(w, &r);

	if (rc)
		failed(w, "/proc/<pid>/io", rc);
	else
		hd_disk_take(w, raw, &r);
}

void hd_disk_finish(struct hd_window *w)
{
	char line[64];

	if (w->disk && w->disk_rows && hostfmt_disk_start(line, sizeof(line), w->disk_start_raw) > 0)
		fputs(line, w->disk);
}

void hd_sample(struct hd_window *w, const char *uptime)
{
	uint64_t raw = raw_now();

	w->last_raw = raw;
	if (w->cpu)
		sample_cpu(w, uptime, raw);
	if (w->mem)
		sample_mem(w, raw);
	if (w->disk)
		sample_disk(w, raw);
	if (w->net)
		sample_net(w, raw);
}
