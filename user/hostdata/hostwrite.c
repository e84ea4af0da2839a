// SPDX-License-Identifier: MIT
/*
 * A stopped window's host data into its folder in --output (see
 * hostdata.h): <prof>/host/data/host_{syscall,cpu,mem}.data.slice_0, each
 * written as host/.dynprof_<name>.tmp (outside data/: any other file there
 * whose name starts like a data file aborts msprof's export) and renamed
 * into place, never over a file already there; and the strace -c like
 * summary, <prof>/dynprof_host_summary.txt. Nothing is followed: the
 * folder came from the target.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "common/rootfile.h"
#include "config/hostsys.h"
#include "hostdata/hostdata_impl.h"
#include "hostdata/hostfmt.h"
#include "report/report.h"
#include "shared/decimal.h"

#include "syscall_names.h" /* generated: the build host's syscall numbers, as dp_syscall_names[] */

#define SUMMARY_NAME "dynprof_host_summary.txt"
#define NR_MAX 1024 /* syscall numbers summarised by name; above, by number */

const char *hd_syscall_name(uint32_t nr, char *buf, size_t len)
{
	if (nr < sizeof(dp_syscall_names) / sizeof(dp_syscall_names[0]) && dp_syscall_names[nr])
		return dp_syscall_names[nr];
	snprintf(buf, len, "syscall_%u", nr);
	return buf;
}

static int by_entry(const void *a, const void *b)
{
	const struct dp_osrt_call *x = a, *y = b;

	return x->entry_ns < y->entry_ns ? -1 : x->entry_ns > y->entry_ns;
}

const char *hd_call_name(uint32_t nr, char *buf, size_t len)
{
	return DP_OSRT_IS_PTH(nr) ? hd_pth_name(nr) : hd_syscall_name(nr, buf, len);
}

void hd_sort_calls(struct hd_window *w)
{
	if (w->ncalls)
		qsort(w->calls, w->ncalls, sizeof(*w->calls), by_entry);
	w->by_thread = false;
}

#define START_INFO_MAX 4096 /* a few JSON members */

static int open_dir(int at, const char *name)
{
	int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/*
 * start_info's clockMonotonicRaw (the instant msprof pins the first line to);
 * 0: none. The file is the target's writing: opened and read as every file
 * a target made (rootfile: no symlink, never blocking, regular files only,
 * bounded), so a FIFO there cannot hold the window's end.
 */
static char *read_small_file(int host, const char *name, size_t max)
{
	int fd = rootfile_open(host, name);
	char *text = NULL;
	size_t n;

	if (fd < 0)
		return NULL;
	if (rootfile_read(fd, max, &text, &n))
		text = NULL;
	close(fd);
	return text;
}

static uint64_t json_u64(const cJSON *root, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
	uint64_t n;

	return cJSON_IsString(v) && !decimal_u64(v->valuestring, 1, UINT64_MAX, &n) ? n : 0;
}

static uint64_t start_raw(int host)
{
	char *text = read_small_file(host, "start_info", START_INFO_MAX);
	cJSON *root = text ? cJSON_Parse(text) : NULL;
	uint64_t raw = json_u64(root, "clockMonotonicRaw");

	cJSON_Delete(root);
	free(text);
	return raw;
}

/* text into host/<name> through a temporary file, replacing it (nothing followed); 0 or -errno. */
static int replace_file(int host, const char *name, const char *text)
{
	char tmp[64];
	size_t len = strlen(text);
	int fd, rc = 0;

	snprintf(tmp, sizeof(tmp), ".dynprof_%s.tmp", name);
	unlinkat(host, tmp, 0);
	fd = openat(host, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len)
		rc = -EIO;
	if (close(fd) && !rc)
		rc = -errno;
	if (!rc && renameat(host, tmp, host, name))
		rc = -errno;
	if (rc)
		unlinkat(host, tmp, 0);
	return rc;
}

/* start_info.done's filesize line, when there is one, made the new size. */
static void resize_done(int host, size_t size)
{
	char *text = read_small_file(host, "start_info.done", 4096), out[4200];
	size_t used = 0;

	if (!text)
		return;
	for (char *line = text, *nl; *line && used < sizeof(out);
	     line = nl ? nl + 1 : line + strlen(line)) {
		int k;

		nl = strchr(line, '\n');
		if (!strncmp(line, "filesize:", 9))
			k = snprintf(out + used, sizeof(out) - used, "filesize:%zu\n", size);
		else
			k = snprintf(out + used, sizeof(out) - used, "%.*s\n",
				     (int)(nl ? (size_t)(nl - line) : strlen(line)), line);
		used += k > 0 ? (size_t)k : 0;
	}
	if (used < sizeof(out))
		replace_file(host, "start_info.done", out);
	free(text);
}

static void set_text(cJSON *root, const char *key, const char *value)
{
	if (cJSON_GetObjectItemCaseSensitive(root, key))
		cJSON_ReplaceItemInObjectCaseSensitive(root, key, cJSON_CreateString(value));
}

/*
 * --host-sys-before: msprof pins the first osrt line to start_info's
 * instant and drops what came before it, so the window's start_info is
 * moved back to the host data's begin: clockMonotonicRaw and
 * collectionTimeBegin by the same amount (msprof's mapping from the raw
 * clock to the wall clock is unchanged), collectionDateBegin with it.
 * *raw becomes the new instant; 0, or -errno when it stays as it was.
 */
static int move_start_info(int host, uint64_t *raw, uint64_t begin_raw)
{
	char *text = read_small_file(host, "start_info", START_INFO_MAX), num[32], date[64];
	cJSON *root = text ? cJSON_Parse(text) : NULL;
	uint64_t us = json_u64(root, "collectionTimeBegin"), back = (*raw - begin_raw) / 1000;
	char *out = NULL;
	int rc = -EINVAL;

	if (root && us > back && json_u64(root, "clockMonotonicRaw") == *raw) {
		struct timespec ts = { (time_t)((us - back) / 1000000),
				       (long)((us - back) % 1000000) * 1000 };
		struct tm tm;

		snprintf(num, sizeof(num), "%" PRIu64, *raw - back * 1000);
		set_text(root, "clockMonotonicRaw", num);
		snprintf(num, sizeof(num), "%" PRIu64, us - back);
		set_text(root, "collectionTimeBegin", num);
		if (localtime_r(&ts.tv_sec, &tm) &&
		    strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S", &tm)) {
			snprintf(date + strlen(date), sizeof(date) - strlen(date), ".%06ld",
				 ts.tv_nsec / 1000);
			set_text(root, "collectionDateBegin", date);
		}
		out = cJSON_PrintUnformatted(root); /* one line: msprof reads the first */
		rc = out ? replace_file(host, "start_info", out) : -ENOMEM;
	}
	if (!rc) {
		resize_done(host, strlen(out));
		*raw -= back * 1000;
	}
	free(out);
	cJSON_Delete(root);
	free(text);
	return rc;
}

struct out {
	int host, data;
	const char *prof;
	int pid;
};

/* A temporary file in host/ for `name`; its stream, or NULL (said). */
static FILE *begin(const struct out *o, const char *name, char *tmp, size_t len)
{
	int fd;
	FILE *f;

	snprintf(tmp, len, ".dynprof_%s.tmp", name);
	unlinkat(o->host, tmp, 0);
	fd = openat(o->host, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
	f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!f) {
		report_warning("dynprof: pid %d: cannot write %s/host/%s: %s", o->pid, o->prof, tmp,
			       strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	return f;
}

/* Close and rename into data/ (never over a file there); 0 or a negative errno, said. */
static int finish(const struct out *o, FILE *f, const char *tmp, const char *name)
{
	int rc = ferror(f) ? -EIO : 0;

	if (fclose(f) && !rc)
		rc = -errno;
	if (!rc && renameat2(o->host, tmp, o->data, name, RENAME_NOREPLACE))
		rc = -errno;
	if (rc) {
		report_warning("dynprof: pid %d: cannot write %s/host/data/%s: %s", o->pid, o->prof,
			       name, rc == -EEXIST ? "the target wrote one already" : strerror(-rc));
		unlinkat(o->host, tmp, 0);
	}
	return rc;
}

static void write_calls(const struct hd_window *w, const struct out *o, uint64_t anchor)
{
	char tmp[96], line[HOSTFMT_LINE_MAX], nrbuf[32];
	const char *name = "host_syscall.data.slice_0";
	FILE *f = begin(o, name, tmp, sizeof(tmp));

	if (!f)
		return;
	if (hostfmt_syscall_anchor(line, sizeof(line), anchor, w->comm, (uint32_t)w->pid) > 0)
		fputs(line, f);
	for (size_t i = 0; i < w->ncalls; i++) {
		const struct dp_osrt_call *c = &w->calls[i];
		uint64_t raw = c->entry_ns - (uint64_t)w->mono_minus_raw;

		if (raw < anchor || DP_OSRT_IS_PTH(c->nr)) /* before msprof's start; host_pthreadcall's */
			continue;
		if (hostfmt_syscall_line(line, sizeof(line), raw, c->dur_ns, c->comm, c->tid,
					 hd_syscall_name(c->nr, nrbuf, sizeof(nrbuf)), c->arg0,
					 c->ret) > 0)
			fputs(line, f);
	}
	finish(o, f, tmp, name);
}

/* host_pthreadcall: the pthread records, after a pthread_once anchor; none: no file. */
static void write_pthreads(const struct hd_window *w, const struct out *o, uint64_t anchor)
{
	const char *name = "host_pthreadcall.data.slice_0", *slash = strrchr(w->pth_lib, '/');
	const char *lib = slash ? slash + 1 : w->pth_lib;
	char tmp[96], line[HOSTFMT_LINE_MAX];
	size_t n = 0;
	FILE *f;

	for (size_t i = 0; i < w->ncalls; i++)
		n += DP_OSRT_IS_PTH(w->calls[i].nr);
	if (!n || !(f = begin(o, name, tmp, sizeof(tmp))))
		return;
	if (hostfmt_pthread_anchor(line, sizeof(line), anchor, (uint32_t)w->pid, lib) > 0)
		fputs(line, f);
	for (size_t i = 0; i < w->ncalls; i++) {
		const struct dp_osrt_call *c = &w->calls[i];
		uint64_t raw = c->entry_ns - (uint64_t)w->mono_minus_raw;

		if (raw < anchor || !DP_OSRT_IS_PTH(c->nr))
			continue;
		if (hostfmt_pthread_line(line, sizeof(line), raw, c->dur_ns, c->tid, lib,
					 hd_pth_name(c->nr), c->arg0, c->ret) > 0)
			fputs(line, f);
	}
	finish(o, f, tmp, name);
}

/* A temporary file's text, copied into data/<name>; an empty one gives no file (no lane). */
static void write_copy(const struct out *o, FILE *from, const char *name)
{
	char tmp[96], buf[65536];
	size_t n;
	FILE *f;

	if (!from || fflush(from) || ftell(from) <= 0)
		return;
	f = begin(o, name, tmp, sizeof(tmp));
	if (!f)
		return;
	rewind(from);
	while ((n = fread(buf, 1, sizeof(buf), from)) > 0)
		fwrite(buf, 1, n, f);
	fseek(from, 0, SEEK_END);
	finish(o, f, tmp, name);
}

/* The pthread records per function (counts[DP_OSRT_PTH_NFUNCS]); their total. */
static size_t pth_counts(const struct hd_window *w, uint64_t *counts)
{
	size_t all = 0;

	memset(counts, 0, DP_OSRT_PTH_NFUNCS * sizeof(*counts));
	for (size_t i = 0; i < w->ncalls; i++) {
		uint32_t nr = w->calls[i].nr;

		if (DP_OSRT_IS_PTH(nr) && (nr & ~DP_OSRT_PTH_NR) < DP_OSRT_PTH_NFUNCS) {
			counts[nr & ~DP_OSRT_PTH_NR]++;
			all++;
		}
	}
	return all;
}

/* Totals per system call of calls[0..ncalls), sorted; *nstat entries of the returned array (NULL: none). */
static struct hostfmt_callstat *tally_calls(const struct dp_osrt_call *calls, size_t ncalls,
					    size_t *nstat, uint64_t *all)
{
	static char names[NR_MAX][32];
	struct hostfmt_callstat *st = calloc(NR_MAX + 1, sizeof(*st));
	size_t n = 0;

	*nstat = 0;
	*all = 0;
	if (!st)
		return NULL;
	for (size_t i = 0; i < ncalls; i++) {
		const struct dp_osrt_call *c = &calls[i];
		struct hostfmt_callstat *s = &st[c->nr < NR_MAX ? c->nr : NR_MAX];

		if (DP_OSRT_IS_PTH(c->nr)) /* not a system call: counted by pth_counts */
			continue;
		s->calls++;
		s->errors += c->ret < 0 && c->ret > -4096;
		s->total_ns += c->dur_ns;
		s->max_ns = c->dur_ns > s->max_ns ? c->dur_ns : s->max_ns;
		*all += c->dur_ns;
	}
	for (uint32_t nr = 0; nr <= NR_MAX; nr++)
		if (st[nr].calls) {
			st[n] = st[nr];
			st[n++].name = nr < NR_MAX ? hd_syscall_name(nr, names[nr], sizeof(names[nr])) :
						     "(others)";
		}
	hostfmt_callstat_sort(st, n);
	*nstat = n;
	return st;
}

static struct hostfmt_callstat *tally(const struct hd_window *w, size_t *nstat, uint64_t *all)
{
	return tally_calls(w->calls, w->ncalls, nstat, all);
}

/* The table of calls[0..n)'s system calls, as strace -c prints one. */
static void write_table(FILE *f, const struct dp_osrt_call *calls, size_t n)
{
	char line[HOSTFMT_LINE_MAX];
	uint64_t all;
	size_t nst;
	struct hostfmt_callstat *st = tally_calls(calls, n, &nst, &all);

	if (hostfmt_summary_head(line, sizeof(line)) > 0)
		fputs(line, f);
	for (size_t i = 0; st && i < nst; i++)
		if (hostfmt_summary_line(line, sizeof(line), &st[i], all) > 0)
			fputs(line, f);
	free(st);
}

static int by_thread(const void *a, const void *b)
{
	const struct dp_osrt_call *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* Then one table per thread, by tid (sorts w's calls by thread: hd_write sorts them back). */
static void write_threads(struct hd_window *w, FILE *f)
{
	char comm[32];

	qsort(w->calls, w->ncalls, sizeof(*w->calls), by_thread);
	w->by_thread = true;
	for (size_t i = 0, j; i < w->ncalls; i = j) {
		size_t sys = 0;

		for (j = i; j < w->ncalls && w->calls[j].tid == w->calls[i].tid; j++)
			sys += !DP_OSRT_IS_PTH(w->calls[j].nr);
		if (!sys)
			continue;
		hostfmt_comm(w->calls[j - 1].comm, sizeof(w->calls[j - 1].comm), comm, sizeof(comm));
		fprintf(f, "\nthread %" PRIu32 " %s: %zu system calls\n", w->calls[i].tid, comm, sys);
		write_table(f, w->calls + i, j - i);
	}
}

/* The whole window's table, then each thread's. */
static void write_summary(struct hd_window *w, int prof_fd, const struct out *o)
{
	int fd = openat(prof_fd, SUMMARY_NAME,
			O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0640);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
	uint64_t pc[DP_OSRT_PTH_NFUNCS];
	size_t npth;

	if (!f) {
		report_warning("dynprof: pid %d: cannot write %s/%s: %s", w->pid, o->prof,
			       SUMMARY_NAME, strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	npth = pth_counts(w, pc);
	fprintf(f,
		"pid %d: %zu system calls, %zu pthread calls, %" PRIu64
		" lost (ring buffer full), %" PRIu64 " lost (over the limit)\n",
		w->pid, w->ncalls - npth, npth, w->kernel_lost, w->over_cap);
	if (w->kept)
		fprintf(f,
			"--host-sys-before: from %" PRIu64 " ms before the START: %" PRIu64
			" calls and %" PRIu64 " samples from before the open, %" PRIu64
			" calls and %" PRIu64 " samples dropped from the buffer\n",
			(w->opened_raw - w->begin_raw) / 1000000, w->before_calls,
			w->before_samples, w->before_dropped, w->before_samples_dropped);
	write_table(f, w->calls, w->ncalls);
	write_threads(w, f);
	fclose(f);
}

static int open_data(int host)
{
	if (mkdirat(host, "data", 0750) && errno != EEXIST)
		return -errno;
	return open_dir(host, "data");
}

void hd_write(struct hd_window *w, const char *output, const char *prof, bool first)
{
	struct out o = { -1, -1, prof, w->pid };
	int out = open(output, O_RDONLY | O_DIRECTORY | O_CLOEXEC), p;
	uint64_t anchor;

	p = out < 0 ? -errno : open_dir(out, prof);
	o.host = p < 0 ? p : open_dir(p, "host");
	o.data = o.host < 0 ? o.host : open_data(o.host);
	if (o.data < 0) {
		report_warning("dynprof: pid %d: no host data written in %s/%s: %s", w->pid, output,
			       prof, strerror(-o.data));
		goto done;
	}
	if (first || w->by_thread) /* the files want them by time */
		hd_sort_calls(w);
	anchor = start_raw(o.host);
	if (!anchor) /* no start_info: the window's own open, or with --host-sys-before its begin */
		anchor = w->kept ? w->begin_raw : w->opened_raw;
	else if (w->kept && w->begin_raw < anchor && move_start_info(o.host, &anchor, w->begin_raw))
		report_warning("dynprof: pid %d: %s/host/start_info could not be moved back to --host-sys-before's begin: its host data begins at start_info's instant",
			       w->pid, prof);
	if ((w->what & HOSTSYS_OSRT) && !w->osrt_why[0]) {
		write_calls(w, &o, anchor);
		write_pthreads(w, &o, anchor);
	}
	write_copy(&o, w->cpu, "host_cpu.data.slice_0");
	write_copy(&o, w->mem, "host_mem.data.slice_0");
	write_copy(&o, w->disk, "host_disk.data.slice_0");
	write_copy(&o, w->net, "host_network.data.slice_0");
	if ((w->what & HOSTSYS_OSRT) && !w->osrt_why[0])
		write_summary(w, p, &o);
done:
	if (o.data >= 0)
		close(o.data);
	if (o.host >= 0)
		close(o.host);
	if (p >= 0)
		close(p);
	if (out >= 0)
		close(out);
}

static void say_pthreads(const struct hd_window *w, int window_number)
{
	static const char *const names[DP_OSRT_PTH_NFUNCS] = DP_OSRT_PTH_FUNCS;
	uint64_t pc[DP_OSRT_PTH_NFUNCS];
	size_t all = pth_counts(w, pc);
	char each[256] = "";
	size_t used = 0;

	if (w->pth_why[0]) {
		report_warning("dynprof: pid %d: window %d: no pthread calls recorded: %s", w->pid,
			       window_number, w->pth_why);
		return;
	}
	for (int i = 0; i < DP_OSRT_PTH_NFUNCS; i++) {
		int k = snprintf(each + used, sizeof(each) - used, "%s%s %" PRIu64, i ? ", " : "",
				 names[i], pc[i]);

		if (k < 0 || (size_t)k >= sizeof(each) - used)
			break;
		used += (size_t)k;
	}
	report_info("pid %d: window %d: host data: %zu pthread calls in %s (%s)", w->pid,
		    window_number, all, w->pth_lib, each);
}

void hd_say(const struct hd_window *w, int window_number)
{
	uint64_t pc[DP_OSRT_PTH_NFUNCS];
	char top[512] = "";
	uint64_t all;
	size_t n, used = 0;
	struct hostfmt_callstat *st = tally(w, &n, &all);

	for (size_t i = 0; st && i < n && i < 5; i++) {
		int k = snprintf(top + used, sizeof(top) - used,
				 "%s %s %" PRIu64 "x %" PRIu64 ".%03" PRIu64 " ms (max %" PRIu64 " us)",
				 i ? "," : "; most time in", st[i].name, st[i].calls,
				 st[i].total_ns / 1000000, st[i].total_ns / 1000 % 1000,
				 st[i].max_ns / 1000);
		if (k < 0 || (size_t)k >= sizeof(top) - used)
			break;
		used += (size_t)k;
	}
	free(st);
	if (w->what & HOSTSYS_OSRT) {
		if (w->osrt_why[0])
			report_warning("dynprof: pid %d: window %d: no system calls recorded: %s",
				       w->pid, window_number, w->osrt_why);
		else
			report_info("pid %d: window %d: host data: %zu system calls, %" PRIu64 " lost%s",
				    w->pid, window_number, w->ncalls - pth_counts(w, pc),
				    w->kernel_lost + w->over_cap + w->before_dropped, top);
		if (!w->osrt_why[0])
			say_pthreads(w, window_number);
	}
	if (w->kept)
		report_info("pid %d: window %d: host data from %" PRIu64
			    " ms before its open (--host-sys-before): %" PRIu64 " calls and %" PRIu64
			    " samples from before it, %" PRIu64 " calls and %" PRIu64
			    " samples dropped from the buffer (at most %u calls a target)",
			    w->pid, window_number, (w->opened_raw - w->begin_raw) / 1000000,
			    w->before_calls, w->before_samples, w->before_dropped,
			    w->before_samples_dropped, HD_KEEP_MAX_CALLS);
	if (w->what & ~HOSTSYS_OSRT)
		report_info("pid %d: window %d: host data: %" PRIu64 " cpu, %" PRIu64
			    " mem, %" PRIu64 " network samples, %" PRIu64 " disk rows%s%s",
			    w->pid, window_number, w->cpu_blocks, w->mem_lines, w->net_blocks,
			    w->disk_rows, w->sample_why[0] ? "; first failure: " : "", w->sample_why);
}
