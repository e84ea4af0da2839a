// SPDX-License-Identifier: MIT
/*
 * The windows being collected and the collecting thread (see hostdata.h).
 * The lock covers the window table, the ring buffer and every window's
 * data until write takes a stopped window out of the table.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config/hostsys.h"
#include "hostdata/hostdata.h"
#include "hostdata/hostdata_impl.h"
#include "hostdata/osrt.h"
#include "report/report.h"

#define HD_MAX_WINDOWS DP_OSRT_MAX_TGIDS

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static struct hd_window *windows[HD_MAX_WINDOWS];
static int nwindows, nactive;
static bool thread_started, said_own;
static char osrt_failed[256]; /* why the BPF side could not load, once per run */

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct hd_window *find(int pid, bool stopped)
{
	for (int i = 0; i < nwindows; i++)
		if (windows[i]->pid == pid && windows[i]->stopped == stopped)
			return windows[i];
	return NULL;
}

/* A record from the ring (lock held): kept by its window, when it began in it. */
static void on_call(void *ctx, const struct dp_osrt_call *c)
{
	struct hd_window *w = find((int)c->tgid, false);

	(void)ctx;
	if (!w || c->entry_ns < w->opened_mono)
		return;
	if (w->ncalls == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 4096;
		void *p = cap <= HD_MAX_CALLS ? realloc(w->calls, cap * sizeof(*w->calls)) : NULL;

		if (!p) {
			w->over_cap++;
			return;
		}
		w->calls = p;
		w->cap = cap;
	}
	w->calls[w->ncalls++] = *c;
}

static void sample_all(void)
{
	char uptime[128] = "";

	if (hd_read_small("/proc/uptime", uptime, sizeof(uptime)))
		uptime[0] = '\0';
	for (int i = 0; i < nwindows; i++)
		if (!windows[i]->stopped && (windows[i]->what & (HOSTSYS_CPU | HOSTSYS_MEM)))
			hd_sample(windows[i], uptime);
}

static void *collector(void *arg)
{
	uint64_t next_sample = 0;

	(void)arg;
	pthread_mutex_lock(&lock);
	for (;;) {
		struct timespec pause = { 0, (long)HD_READ_NS };
		uint64_t now;

		while (!nactive) /* no window: no wakeups at all */
			pthread_cond_wait(&wake, &lock);
		osrt_consume();
		now = now_ns(CLOCK_MONOTONIC_RAW);
		if (now >= next_sample) {
			sample_all();
			next_sample =
				(next_sample && now - next_sample < HD_SAMPLE_NS ? next_sample : now) +
				HD_SAMPLE_NS;
		}
		pthread_mutex_unlock(&lock);
		nanosleep(&pause, NULL);
		pthread_mutex_lock(&lock);
	}
	return NULL;
}

/* The thread takes no signal: they stay the session's. Lock held. */
static int start_thread(void)
{
	sigset_t all, old;
	pthread_t th;
	int rc;

	if (thread_started)
		return 0;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&th, NULL, collector, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		return -rc;
	pthread_detach(th);
	thread_started = true;
	return 0;
}

static void read_comm(int pid, char *comm, size_t len)
{
	char path[64], buf[64] = "";

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	if (hd_read_small(path, buf, sizeof(buf)))
		snprintf(buf, sizeof(buf), "?");
	buf[strcspn(buf, "\n")] = '\0';
	snprintf(comm, len, "%.15s", buf);
}

/* The clocks at open: the records' (MONOTONIC) minus msprof's (MONOTONIC_RAW), read around it. */
static void stamp_open(struct hd_window *w)
{
	uint64_t raw1 = now_ns(CLOCK_MONOTONIC_RAW), mono = now_ns(CLOCK_MONOTONIC),
		 raw2 = now_ns(CLOCK_MONOTONIC_RAW);

	w->opened_mono = mono;
	w->opened_raw = raw1 + (raw2 - raw1) / 2;
	w->mono_minus_raw = (int64_t)(mono - w->opened_raw);
}

/* Lock held. The BPF side was loaded by hostdata_prepare, or said why not. */
static void open_osrt(struct hd_window *w)
{
	char why[256] = "";
	int rc;

	if (osrt_failed[0]) {
		snprintf(w->osrt_why, sizeof(w->osrt_why), "%s", osrt_failed);
		return;
	}
	rc = osrt_watch((uint32_t)w->pid, why, sizeof(why));
	if (rc)
		snprintf(w->osrt_why, sizeof(w->osrt_why), "%s",
			 why[0]        ? why :
			 rc == -ENODEV ? "the BPF side is not loaded" :
					 strerror(-rc));
}

static FILE *scratch(struct hd_window *w, unsigned bit)
{
	FILE *f = (w->what & bit) ? tmpfile() : NULL;

	if ((w->what & bit) && !f)
		snprintf(w->sample_why, sizeof(w->sample_why), "no temporary file: %s", strerror(errno));
	return f;
}

void hostdata_prepare(const struct options *o)
{
	unsigned what = hostsys_own(options_switch(o, "host-sys"));
	char why[256] = "";
	int rc;

	if (!what || said_own)
		return;
	report_info("--host-sys: dynprof collects %s itself (system calls from the kernel, /proc samples every 20 ms); the target is not asked to run perf or ltrace",
		    HOSTSYS_OWN_WORDS);
	said_own = true;
	if (!(what & HOSTSYS_OSRT))
		return;
	pthread_mutex_lock(&lock);
	rc = o->no_bpf ? -EPERM : osrt_load(on_call, NULL, why, sizeof(why));
	if (rc) {
		snprintf(osrt_failed, sizeof(osrt_failed), "%s",
			 o->no_bpf ? "--no-bpf" :
			 why[0]    ? why :
				     strerror(-rc));
		report_warning("dynprof: --host-sys=osrt: cannot trace system calls: %s; windows get no host_syscall data",
			       osrt_failed);
	}
	pthread_mutex_unlock(&lock);
}

void hostdata_window_open(int pid, const struct options *o)
{
	unsigned what = hostsys_own(options_switch(o, "host-sys"));
	struct hd_window *w;

	if (!what)
		return;
	w = calloc(1, sizeof(*w));
	pthread_mutex_lock(&lock);
	if (!w || nwindows == HD_MAX_WINDOWS || start_thread()) {
		pthread_mutex_unlock(&lock);
		report_warning("dynprof: pid %d: no host data for this window: %s", pid,
			       w ? "too many windows or no thread" : "out of memory");
		free(w);
		return;
	}
	w->pid = pid;
	w->what = what;
	read_comm(pid, w->comm, sizeof(w->comm));
	stamp_open(w);
	w->cpu = scratch(w, HOSTSYS_CPU);
	w->mem = scratch(w, HOSTSYS_MEM);
	if (what & HOSTSYS_OSRT)
		open_osrt(w);
	windows[nwindows++] = w;
	nactive++;
	pthread_cond_signal(&wake);
	pthread_mutex_unlock(&lock);
}

void hostdata_window_stop(int pid)
{
	struct hd_window *w;
	uint64_t lost = 0;

	pthread_mutex_lock(&lock);
	w = find(pid, false);
	if (w) {
		if ((w->what & HOSTSYS_OSRT) && !w->osrt_why[0]) {
			/* No new records once unwatched; the ring's last ones are this window's. */
			if (!osrt_unwatch((uint32_t)pid, &lost))
				w->kernel_lost = lost;
			osrt_consume();
		}
		w->stopped = true;
		nactive--;
	}
	pthread_mutex_unlock(&lock);
}

static void forget(struct hd_window *w)
{
	if (w->cpu)
		fclose(w->cpu);
	if (w->mem)
		fclose(w->mem);
	free(w->calls);
	free(w);
}

void hostdata_window_write(int pid, const char *output, struct window_account *a)
{
	struct hd_window *w;

	pthread_mutex_lock(&lock);
	w = find(pid, true);
	for (int i = 0; w && i < nwindows; i++)
		if (windows[i] == w)
			windows[i] = windows[--nwindows];
	pthread_mutex_unlock(&lock);
	if (!w)
		return;
	for (int i = 0; i < a->nprof; i++)
		hd_write(w, output, a->prof[i], i == 0);
	if (a->nprof)
		hd_say(w, a->number);
	a->host_lost = w->kernel_lost + w->over_cap;
	if (a->host_lost && !a->reason[0])
		snprintf(a->reason, sizeof(a->reason),
			 "%llu system call records lost (%llu: the kernel's ring buffer was full, %llu: past dynprof's limit of %u per window)",
			 (unsigned long long)a->host_lost, (unsigned long long)w->kernel_lost,
			 (unsigned long long)w->over_cap, HD_MAX_CALLS);
	forget(w);
}
