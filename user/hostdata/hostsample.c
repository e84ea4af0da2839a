// SPDX-License-Identifier: MIT
/*
 * One cpu and mem sample of a window's process (see hostdata_impl.h): as
 * msprof's own sampler reads them, /proc/uptime and each thread's
 * /proc/<pid>/task/<tid>/stat, and /proc/<pid>/statm, stamped with
 * CLOCK_MONOTONIC_RAW. The text goes through hostfmt (the grammar) into
 * the window's temporary files; a line that would not parse is left out,
 * never written (one bad line loses a whole cpu slice in msprof).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config/hostsys.h"
#include "hostdata/hostdata_impl.h"
#include "hostdata/hostfmt.h"

int hd_read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0)
		rc = -errno;
	buf[n > 0 ? n : 0] = '\0';
	close(fd);
	return rc;
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

/* Each thread's stat line; a thread gone between the listing and the read is left out. */
static void sample_threads(struct hd_window *w, DIR *d)
{
	char path[96], stat[HOSTFMT_LINE_MAX], line[HOSTFMT_LINE_MAX];
	struct dirent *e;
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
	}
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
		fputs(head, w->cpu);
		sample_threads(w, d);
		w->cpu_blocks++;
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
}

void hd_sample(struct hd_window *w, const char *uptime)
{
	uint64_t raw = raw_now();

	if (w->cpu)
		sample_cpu(w, uptime, raw);
	if (w->mem)
		sample_mem(w, raw);
}
