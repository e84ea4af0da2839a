// SPDX-License-Identifier: MIT
/* A run's Chrome Trace Event file (see trace_out.h, docs/TRACE.md). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/pidtab.h"
#include "report/escape.h"
#include "report/trace_out.h"
#include "shared/clock.h"
#include "shared/jsonstr.h"

/* What the trace knows of one target (a process lane). */
struct tr_proc {
	int windows;         /* windows opened so far: the next one's number */
	bool open;           /* a window is open */
	uint64_t open_ns;    /* its open, CLOCK_MONOTONIC */
	struct pidtab named; /* tids whose lane is named */
	uint64_t bucket;     /* the fold interval being counted (its start, ns) */
	uint64_t count;      /* calls folded in it */
	bool counting;       /* bucket holds a count not yet written */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *out;
static bool first_event;
static uint64_t fold_ns;
static struct pidtab procs;
static struct trace_totals totals;

bool trace_enabled(void)
{
	bool on;

	pthread_mutex_lock(&lock);
	on = out != NULL;
	pthread_mutex_unlock(&lock);
	return on;
}

void trace_rule(char *buf, size_t len)
{
	snprintf(buf, len,
		 "system calls shorter than %" PRIu64 " us, and every call past %llu slices, are"
		 " not drawn but counted per process and %llu ms interval (counter \"folded calls\")",
		 fold_ns / 1000, TRACE_MAX_SLICES, TRACE_FOLD_INTERVAL_NS / 1000000);
}

/* Text from a target as a JSON string: escaped to ASCII first (report/escape.h). */
static void put_text(const char *text)
{
	char *safe = text_escape_dup(text ? text : "");

	json_put_string(out, safe ? safe : "(out of memory)");
	free(safe);
}

/* ns as the format's microseconds, exactly (3 decimals). */
static void put_us(const char *key, uint64_t ns)
{
	fprintf(out, ",\"%s\":%" PRIu64 ".%03u", key, ns / 1000, (unsigned)(ns % 1000));
}

/* The start of one event object: separator, phase, pid, tid. */
static void begin_event(char ph, int pid, uint32_t tid)
{
	fputs(first_event ? "\n" : ",\n", out);
	first_event = false;
	fprintf(out, "{\"ph\":\"%c\",\"pid\":%d,\"tid\":%" PRIu32, ph, pid, tid);
}

static void end_event(void)
{
	fputc('}', out);
	if (ferror(out) && !totals.write_error)
		totals.write_error = errno ? (uint64_t)errno : EIO;
}

/* A metadata event naming a process or thread lane. */
static void put_name(int pid, uint32_t tid, const char *what, const char *name)
{
	begin_event('M', pid, tid);
	fprintf(out, ",\"name\":\"%s\",\"args\":{\"name\":", what);
	put_text(name);
	fputc('}', out);
	end_event();
}

static int lane_pid(int pid)
{
	return pid > 0 ? pid : (int)getpid();
}

/* pid's record, made (and its window lane named) the first time; NULL: no memory. */
static struct tr_proc *proc_of(int pid)
{
	struct tr_proc *p = pidtab_get(&procs, pid);

	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p || pidtab_put(&procs, pid, p)) {
		free(p);
		return NULL;
	}
	pidtab_init(&p->named);
	put_name(pid, TRACE_WINDOWS_TID, "thread_name", "dynprof windows");
	return p;
}

/* dynprof's own lane and the rule, with the clocks, so the file says how it was made. */
static void put_header(void)
{
	char rule[256];
	int self = (int)getpid();

	put_name(self, TRACE_WINDOWS_TID, "process_name", "dynprof");
	proc_of(self);
	trace_rule(rule, sizeof(rule));
	begin_event('i', self, TRACE_WINDOWS_TID);
	fputs(",\"s\":\"t\",\"name\":\"trace rule\"", out);
	put_us("ts", clock_mono_ns());
	fputs(",\"args\":{\"rule\":", out);
	json_put_string(out, rule);
	fprintf(out,
		",\"fold_us\":%" PRIu64 ",\"interval_ms\":%llu,\"max_slices\":%llu,"
		"\"clock\":\"CLOCK_MONOTONIC\",\"wall_us\":%" PRId64 "}",
		fold_ns / 1000, TRACE_FOLD_INTERVAL_NS / 1000000, TRACE_MAX_SLICES, clock_wall_us());
	end_event();
}

int trace_open(int fd, uint64_t fold)
{
	FILE *f = fdopen(fd, "w");

	if (!f) {
		int err = -errno;

		close(fd);
		return err;
	}
	pthread_mutex_lock(&lock);
	out = f;
	first_event = true;
	fold_ns = fold;
	memset(&totals, 0, sizeof(totals));
	pidtab_init(&procs);
	fputc('[', out);
	put_header();
	pthread_mutex_unlock(&lock);
	return 0;
}

/* A window slice: drawn whole at its end, named by its fate so a viewer shows it. */
static void put_window(int pid, struct tr_proc *p, uint64_t end_ns, const char *fate, const char *reason)
{
	char name[64];

	snprintf(name, sizeof(name), "window %d (%s)", p->windows, fate);
	begin_event('X', pid, TRACE_WINDOWS_TID);
	fprintf(out, ",\"name\":\"%s\"", name);
	put_us("ts", p->open_ns);
	put_us("dur", end_ns > p->open_ns ? end_ns - p->open_ns : 0);
	fprintf(out, ",\"args\":{\"fate\":\"%s\"", fate);
	if (reason && *reason) {
		fputs(",\"reason\":", out);
		put_text(reason);
	}
	fputs("}", out);
	end_event();
	p->open = false;
	totals.windows++;
}

static void flush_fold(int pid, struct tr_proc *p);

/* Free every record, ending what is still open. */
static void close_procs(void)
{
	uint64_t now = clock_mono_ns();

	for (size_t i = 0; i < pidtab_cap(&procs); i++) {
		const struct pidtab_slot *s = pidtab_slot(&procs, i);
		struct tr_proc *p = s->val;

		if (!s->pid)
			continue;
		flush_fold(s->pid, p);
		if (p->open)
			put_window(s->pid, p, now, "open at end", "dynprof ended before the window did");
		pidtab_free(&p->named);
		free(p);
	}
	pidtab_free(&procs);
}

int trace_close(struct trace_totals *t)
{
	int rc = 0;

	pthread_mutex_lock(&lock);
	if (out) {
		close_procs();
		fputs("\n]\n", out);
		if (ferror(out) && !totals.write_error)
			totals.write_error = EIO;
		if (fclose(out) && !totals.write_error)
			totals.write_error = (uint64_t)errno;
		rc = -(int)totals.write_error;
		out = NULL;
	}
	if (t)
		*t = totals;
	pthread_mutex_unlock(&lock);
	return rc;
}

void trace_target(int pid, const char *container, const char *command)
{
	char name[512];

	pthread_mutex_lock(&lock);
	if (out && pid > 0) {
		snprintf(name, sizeof(name), "pid %d: %.400s%s%.64s%s", pid,
			 command ? command : "?", container && *container ? " [" : "",
			 container ? container : "", container && *container ? "]" : "");
		put_name(pid, TRACE_WINDOWS_TID, "process_name", name);
		proc_of(pid);
	}
	pthread_mutex_unlock(&lock);
}

void trace_window_open(int pid)
{
	struct tr_proc *p;

	pthread_mutex_lock(&lock);
	if (out && pid > 0 && (p = proc_of(pid)) && !p->open) {
		p->open = true;
		p->open_ns = clock_mono_ns();
		p->windows++;
	}
	pthread_mutex_unlock(&lock);
}

void trace_window_close(int pid, uint64_t end_ns, const char *fate, const char *reason)
{
	struct tr_proc *p;

	pthread_mutex_lock(&lock);
	if (out && pid > 0 && (p = proc_of(pid)) && p->open)
		put_window(pid, p, end_ns, fate, reason);
	pthread_mutex_unlock(&lock);
}

/* An instant's head on pid's window lane, now. */
static void begin_instant(int pid, const char *name)
{
	begin_event('i', lane_pid(pid), TRACE_WINDOWS_TID);
	fputs(",\"s\":\"t\",\"name\":", out);
	put_text(name);
	put_us("ts", clock_mono_ns());
}

void trace_instant(int pid, const char *name, const char *key, const char *text)
{
	pthread_mutex_lock(&lock);
	if (out) {
		proc_of(lane_pid(pid));
		begin_instant(pid, name);
		fputs(",\"args\":{", out);
		if (key) {
			json_put_string(out, key);
			fputc(':', out);
			put_text(text);
		}
		fputc('}', out);
		end_event();
	}
	pthread_mutex_unlock(&lock);
}

void trace_trigger(int pid, int rule, const char *edge, const char *condition, bool has_count,
		   uint64_t count, bool measured, uint64_t value_ns, uint64_t typical_ns)
{
	char name[64];

	pthread_mutex_lock(&lock);
	if (out) {
		proc_of(lane_pid(pid));
		snprintf(name, sizeof(name), "rule %d %s", rule, edge);
		begin_instant(pid, name);
		fputs(",\"args\":{\"condition\":", out);
		put_text(condition);
		if (has_count)
			fprintf(out, ",\"count\":%" PRIu64, count);
		if (measured)
			fprintf(out, ",\"measured_us\":%" PRIu64 ",\"typical_us\":%" PRIu64,
				value_ns / 1000, typical_ns / 1000);
		fputc('}', out);
		end_event();
	}
	pthread_mutex_unlock(&lock);
}

void trace_thread(int pid, uint32_t tid, const char *comm)
{
	struct tr_proc *p;

	pthread_mutex_lock(&lock);
	if (out && pid > 0 && tid > 0 && tid <= INT32_MAX && (p = proc_of(pid)) &&
	    !pidtab_get(&p->named, (int)tid) && !pidtab_put(&p->named, (int)tid, p))
		put_name(pid, tid, "thread_name", comm);
	pthread_mutex_unlock(&lock);
}

/* A counter point on pid's process lane. */
static void put_counter(int pid, const char *name, const char *series, uint64_t ns, double v)
{
	begin_event('C', pid, TRACE_WINDOWS_TID);
	fputs(",\"name\":", out);
	json_put_string(out, name);
	put_us("ts", ns);
	fputs(",\"args\":{", out);
	json_put_string(out, series);
	/* JSON has no inf or nan: a counter that cannot be said is 0. */
	fprintf(out, ":%.6g}", isfinite(v) ? v : 0.0);
	end_event();
}

/* The count of the interval being folded, then 0 from its end (a counter holds its value). */
static void flush_fold(int pid, struct tr_proc *p)
{
	if (!p->counting)
		return;
	put_counter(pid, "folded calls", "calls", p->bucket, (double)p->count);
	put_counter(pid, "folded calls", "calls", p->bucket + TRACE_FOLD_INTERVAL_NS, 0);
	p->counting = false;
	p->count = 0;
}

static void fold_call(int pid, struct tr_proc *p, uint64_t start_ns)
{
	uint64_t bucket = start_ns - start_ns % TRACE_FOLD_INTERVAL_NS;

	if (p->counting && bucket != p->bucket)
		flush_fold(pid, p);
	p->bucket = bucket;
	p->counting = true;
	p->count++;
}

static void put_call(int pid, uint32_t tid, const char *name, uint64_t start_ns, uint64_t dur_ns)
{
	begin_event('X', pid, tid);
	fputs(",\"name\":", out);
	put_text(name);
	put_us("ts", start_ns);
	put_us("dur", dur_ns);
	end_event();
	totals.slices++;
}

void trace_call(int pid, uint32_t tid, const char *name, uint64_t start_ns, uint64_t dur_ns)
{
	struct tr_proc *p;

	pthread_mutex_lock(&lock);
	if (out && pid > 0 && (p = proc_of(pid))) {
		if (dur_ns < fold_ns) {
			totals.folded++;
			fold_call(pid, p, start_ns);
		} else if (totals.slices >= TRACE_MAX_SLICES) {
			totals.over_cap++;
			fold_call(pid, p, start_ns);
		} else {
			put_call(pid, tid, name, start_ns, dur_ns);
		}
	}
	pthread_mutex_unlock(&lock);
}

void trace_calls_end(int pid)
{
	struct tr_proc *p;

	pthread_mutex_lock(&lock);
	if (out && pid > 0 && (p = pidtab_get(&procs, pid)))
		flush_fold(pid, p);
	pthread_mutex_unlock(&lock);
}

void trace_counter(int pid, const char *name, uint64_t mono_ns, double value)
{
	pthread_mutex_lock(&lock);
	if (out && pid > 0 && proc_of(pid))
		put_counter(pid, name, name, mono_ns, value);
	pthread_mutex_unlock(&lock);
}
