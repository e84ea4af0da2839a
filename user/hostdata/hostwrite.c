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

static const char *syscall_name(uint32_t nr, char *buf, size_t len)
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
static uint64_t start_raw(int host)
{
	int fd = rootfile_open(host, "start_info");
	char *text = NULL;
	uint64_t raw = 0;
	cJSON *root, *v;
	size_t n;

	if (fd < 0)
		return 0;
	if (rootfile_read(fd, START_INFO_MAX, &text, &n)) {
		close(fd);
		return 0;
	}
	close(fd);
	root = cJSON_Parse(text);
	v = cJSON_GetObjectItemCaseSensitive(root, "clockMonotonicRaw");
	if (!cJSON_IsString(v) || decimal_u64(v->valuestring, 1, UINT64_MAX, &raw))
		raw = 0;
	cJSON_Delete(root);
	free(text);
	return raw;
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

		if (raw < anchor) /* before the instant msprof starts the window at */
			continue;
		if (hostfmt_syscall_line(line, sizeof(line), raw, c->dur_ns, c->comm, c->tid,
					 syscall_name(c->nr, nrbuf, sizeof(nrbuf)), c->arg0, c->ret) > 0)
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

/* Totals per system call, sorted; *nstat entries of the returned array (NULL: none). */
static struct hostfmt_callstat *tally(const struct hd_window *w, size_t *nstat, uint64_t *all)
{
	static char names[NR_MAX][32];
	struct hostfmt_callstat *st = calloc(NR_MAX + 1, sizeof(*st));
	size_t n = 0;

	*nstat = 0;
	*all = 0;
	if (!st)
		return NULL;
	for (size_t i = 0; i < w->ncalls; i++) {
		const struct dp_osrt_call *c = &w->calls[i];
		struct hostfmt_callstat *s = &st[c->nr < NR_MAX ? c->nr : NR_MAX];

		s->calls++;
		s->errors += c->ret < 0 && c->ret > -4096;
		s->total_ns += c->dur_ns;
		s->max_ns = c->dur_ns > s->max_ns ? c->dur_ns : s->max_ns;
		*all += c->dur_ns;
	}
	for (uint32_t nr = 0; nr <= NR_MAX; nr++)
		if (st[nr].calls) {
			st[n] = st[nr];
			st[n++].name = nr < NR_MAX ? syscall_name(nr, names[nr], sizeof(names[nr])) :
						     "(others)";
		}
	hostfmt_callstat_sort(st, n);
	*nstat = n;
	return st;
}

static void write_summary(const struct hd_window *w, int prof_fd, const struct out *o)
{
	char line[HOSTFMT_LINE_MAX];
	uint64_t all;
	size_t n;
	struct hostfmt_callstat *st = tally(w, &n, &all);
	int fd = openat(prof_fd, SUMMARY_NAME,
			O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0640);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "w");

	if (!f) {
		report_warning("dynprof: pid %d: cannot write %s/%s: %s", w->pid, o->prof,
			       SUMMARY_NAME, strerror(errno));
		if (fd >= 0)
			close(fd);
		free(st);
		return;
	}
	fprintf(f,
		"pid %d: %zu system calls, %" PRIu64 " lost (ring buffer full), %" PRIu64
		" lost (over the limit)\n",
		w->pid, w->ncalls, w->kernel_lost, w->over_cap);
	if (hostfmt_summary_head(line, sizeof(line)) > 0)
		fputs(line, f);
	for (size_t i = 0; i < n; i++)
		if (hostfmt_summary_line(line, sizeof(line), &st[i], all) > 0)
			fputs(line, f);
	fclose(f);
	free(st);
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
	if (first && w->ncalls)
		qsort(w->calls, w->ncalls, sizeof(*w->calls), by_entry);
	anchor = start_raw(o.host);
	if (!anchor) /* no start_info: the window's own open */
		anchor = w->opened_raw;
	if ((w->what & HOSTSYS_OSRT) && !w->osrt_why[0])
		write_calls(w, &o, anchor);
	write_copy(&o, w->cpu, "host_cpu.data.slice_0");
	write_copy(&o, w->mem, "host_mem.data.slice_0");
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

void hd_say(const struct hd_window *w, int window_number)
{
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
				    w->pid, window_number, w->ncalls, w->kernel_lost + w->over_cap, top);
	}
	if (w->what & (HOSTSYS_CPU | HOSTSYS_MEM))
		report_info("pid %d: window %d: host data: %" PRIu64 " cpu and %" PRIu64
			    " mem samples%s%s",
			    w->pid, window_number, w->cpu_blocks, w->mem_lines,
			    w->sample_why[0] ? "; first failure: " : "", w->sample_why);
}
