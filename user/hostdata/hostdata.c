// SPDX-License-Identifier: MIT
/*
 * The windows being collected, the targets kept for --host-sys-before
 * and the collecting thread (see hostdata.h). The lock covers the window
 * and keeper tables, the ring buffer, every keeper's data and every
 * window's until write takes a stopped window out of the table.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/thread.h"
#include "config/hostsys.h"
#include "hostdata/hostdata.h"
#include "hostdata/hostdata_impl.h"
#include "hostdata/iowait.h"
#include "hostdata/osrt.h"
#include "report/events_out.h"
#include "report/report.h"

#define HD_MAX_WINDOWS DP_OSRT_MAX_TGIDS

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static struct hd_window *windows[HD_MAX_WINDOWS];
static int nwindows, nactive;
static struct hd_keep *keeps[HD_MAX_WINDOWS]; /* --host-sys-before: one per joined target */
static int nkeeps;
static bool thread_started, said_own;
static char osrt_failed[256];   /* why the BPF side could not load, once per run */
static char iowait_failed[256]; /* why disk's iowait side could not, once per run */

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

static struct hd_keep *find_keep(int pid)
{
	for (int i = 0; i < nkeeps; i++)
		if (keeps[i]->w.pid == pid)
			return keeps[i];
	return NULL;
}

/* A record from the ring (lock held): kept by its target's keeper, and its window's when it began in it. */
static void on_call(void *ctx, const struct dp_osrt_call *c)
{
	struct hd_window *w = find((int)c->tgid, false);
	struct hd_keep *k = nkeeps ? find_keep((int)c->tgid) : NULL;

	(void)ctx;
	if (k)
		hd_keep_call(k, c);
	if (!w || c->entry_ns < w->begin_mono)
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
		if (!windows[i]->stopped && (windows[i]->what & ~HOSTSYS_OSRT))
			hd_sample(windows[i], uptime);
	for (int i = 0; i < nkeeps; i++)
		hd_keep_sample(keeps[i], uptime);
}

/* The kernel's loss counts of the kept processes, read each period (a map look-up each). */
static void keep_losses(uint64_t now_mono)
{
	uint64_t lost;

	for (int i = 0; i < nkeeps; i++)
		if ((keeps[i]->w.what & HOSTSYS_OSRT) && !keeps[i]->w.osrt_why[0] &&
		    !osrt_lost((uint32_t)keeps[i]->w.pid, &lost))
			hd_keep_lost(keeps[i], lost, now_mono);
}

static void *collector(void *arg)
{
	uint64_t next_sample = 0;

	(void)arg;
	pthread_mutex_lock(&lock);
	for (;;) {
		struct timespec pause = { 0, (long)HD_READ_NS };
		uint64_t now;

		while (!nactive && !nkeeps) /* no window, nothing kept: no wakeups at all */
			pthread_cond_wait(&wake, &lock);
		osrt_consume();
		if (nkeeps)
			keep_losses(now_ns(CLOCK_MONOTONIC));
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
	pthread_t th;
	int rc;

	if (thread_started)
		return 0;
	rc = thread_start(&th, NULL, collector, NULL);
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

/* The owner of /proc/<pid> (the process's uid); 0 when it is gone. */
static unsigned proc_uid(int pid)
{
	char path[32];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", pid);
	return stat(path, &st) ? 0 : (unsigned)st.st_uid;
}

/* The clocks at open: the records' (MONOTONIC) minus msprof's (MONOTONIC_RAW), read around it. */
static void stamp_open(struct hd_window *w)
{
	uint64_t raw1 = now_ns(CLOCK_MONOTONIC_RAW), mono = now_ns(CLOCK_MONOTONIC),
		 raw2 = now_ns(CLOCK_MONOTONIC_RAW);

	w->opened_mono = mono;
	w->opened_raw = raw1 + (raw2 - raw1) / 2;
	w->mono_minus_raw = (int64_t)(mono - w->opened_raw);
	w->begin_mono = w->opened_mono;
	w->begin_raw = w->opened_raw;
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
	if (!rc)
		hd_pth_attach(w);
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

/* Lock held. What o asks for as `sw` (osrt or disk) could not load: said once, kept in `failed`. */
static void load_failed(const struct options *o, int rc, const char *why, char *failed, size_t len,
			const char *sw, const char *without)
{
	snprintf(failed, len, "%s", o->no_bpf ? "--no-bpf" : why[0] ? why : strerror(-rc));
	report_warning("dynprof: --host-sys=%s: %s: %s", sw, without, failed);
}

void hostdata_prepare(const struct options *o)
{
	unsigned what = hostsys_own(options_switch(o, "host-sys"));
	char why[256] = "", words[64];
	int rc;

	if (!what || said_own)
		return;
	report_info("--host-sys: dynprof collects %s itself (system calls from the kernel, /proc samples every 20 ms); the target is not asked to run perf, ltrace or iotop",
		    hostsys_own_words(what, words, sizeof(words)));
	said_own = true;
	pthread_mutex_lock(&lock);
	if (what & HOSTSYS_OSRT) {
		rc = o->no_bpf ? -EPERM : osrt_load(on_call, NULL, why, sizeof(why));
		if (rc)
			load_failed(o, rc, why, osrt_failed, sizeof(osrt_failed), "osrt",
				    "cannot trace system calls; windows get no host_syscall data");
	}
	if (what & HOSTSYS_DISK) {
		why[0] = '\0';
		rc = o->no_bpf ? -EPERM : iowait_load(why, sizeof(why));
		if (rc)
			load_failed(o, rc, why, iowait_failed, sizeof(iowait_failed), "disk",
				    "cannot measure the time waiting for I/O; host_disk rows say ?unavailable? for swapin and io %");
	}
	pthread_mutex_unlock(&lock);
}

/* Lock held. w's process watched for its iowait time, when disk is asked for and could load. */
static void open_iowait(struct hd_window *w)
{
	char why[256] = "";

	if (!(w->what & HOSTSYS_DISK) || iowait_failed[0])
		return;
	w->iowait_on = iowait_watch((uint32_t)w->pid, why, sizeof(why)) == 0;
	if (!w->iowait_on && !w->sample_why[0])
		snprintf(w->sample_why, sizeof(w->sample_why), "no iowait time: %s",
			 why[0] ? why : "the BPF side is not loaded");
}

/* The span since `since_mono` less DURATION, no earlier than the keeper's join; what it kept. Lock held. */
static void open_kept(struct hd_window *w, struct hd_keep *k, uint64_t since_mono)
{
	uint64_t since = since_mono && since_mono < w->opened_mono ? since_mono : w->opened_mono;
	uint64_t begin = since > k->keep_ns ? since - k->keep_ns : 0;

	if (begin < k->w.begin_mono)
		begin = k->w.begin_mono;
	w->kept = true;
	w->begin_mono = begin;
	w->begin_raw = begin - (uint64_t)w->mono_minus_raw;
	osrt_consume(); /* the ring's records are the keeper's before the slice is taken */
	hd_keep_give(k, w, w->opened_mono);
}

void hostdata_window_open(int pid, const struct options *o, uint64_t since_mono)
{
	unsigned what = hostsys_own(options_switch(o, "host-sys"));
	struct hd_keep *k;
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
	w->disk = scratch(w, HOSTSYS_DISK);
	w->net = scratch(w, HOSTSYS_NET);
	w->uid = proc_uid(pid);
	k = find_keep(pid);
	if (k) {
		open_kept(w, k, since_mono);
		w->iowait_on = k->w.iowait_on; /* watched for the keeper */
	} else {
		if (what & HOSTSYS_OSRT)
			open_osrt(w);
		open_iowait(w);
	}
	windows[nwindows++] = w;
	nactive++;
	pthread_cond_signal(&wake);
	pthread_mutex_unlock(&lock);
}

/* The keeper's scratch files: cpu, mem and network (disk readings are kept as numbers, hostkeep.c). */
static void keep_scratch(struct hd_keep *k)
{
	k->w.cpu = scratch(&k->w, HOSTSYS_CPU);
	k->w.mem = scratch(&k->w, HOSTSYS_MEM);
	k->w.net = scratch(&k->w, HOSTSYS_NET);
}

void hostdata_target_join(int pid, const struct options *o)
{
	unsigned what = hostsys_own(options_switch(o, "host-sys"));
	struct hd_keep *k;
	bool kept;

	if (!what || !o->host_before_ms)
		return;
	k = hd_keep_new(pid, what, (uint64_t)o->host_before_ms * 1000000ull);
	pthread_mutex_lock(&lock);
	kept = find_keep(pid) != NULL; /* a second join of the same process: kept already */
	if (!k || kept || nkeeps == HD_MAX_WINDOWS || start_thread()) {
		pthread_mutex_unlock(&lock);
		if (!kept)
			report_warning("dynprof: pid %d: --host-sys-before: nothing kept before its windows: %s",
				       pid, k ? "too many targets or no thread" : "out of memory");
		hd_keep_free(k);
		return;
	}
	read_comm(pid, k->w.comm, sizeof(k->w.comm));
	stamp_open(&k->w);
	keep_scratch(k);
	if (what & HOSTSYS_OSRT)
		open_osrt(&k->w);
	open_iowait(&k->w);
	keeps[nkeeps++] = k;
	pthread_cond_signal(&wake);
	pthread_mutex_unlock(&lock);
}

void hostdata_target_leave(int pid)
{
	struct hd_keep *k;
	uint64_t lost;

	pthread_mutex_lock(&lock);
	k = find_keep(pid);
	for (int i = 0; k && i < nkeeps; i++)
		if (keeps[i] == k)
			keeps[i] = keeps[--nkeeps];
	if (k && (k->w.what & HOSTSYS_OSRT) && !k->w.osrt_why[0] && !osrt_unwatch((uint32_t)pid, &lost))
		osrt_consume(); /* its last records: for a window of it still open */
	if (k && k->w.iowait_on)
		iowait_unwatch((uint32_t)pid);
	pthread_mutex_unlock(&lock);
	if (!k)
		return;
	hd_pth_detach(&k->w);
	if (k->w.cpu)
		fclose(k->w.cpu);
	if (k->w.mem)
		fclose(k->w.mem);
	if (k->w.net)
		fclose(k->w.net);
	hd_keep_free(k);
}

void hostdata_window_stop(int pid)
{
	struct hd_window *w;
	uint64_t lost = 0;

	pthread_mutex_lock(&lock);
	w = find(pid, false);
	if (w) {
		if (w->kept && (w->what & HOSTSYS_OSRT) && !w->osrt_why[0]) {
			/* Still watched for the keeper: the losses since the open are the window's too. */
			osrt_consume();
			if (!osrt_lost((uint32_t)pid, &lost) && lost > w->kernel_base)
				w->kernel_lost += lost - w->kernel_base;
		} else if ((w->what & HOSTSYS_OSRT) && !w->osrt_why[0]) {
			/* No new records once unwatched; the ring's last ones are this window's. */
			if (!osrt_unwatch((uint32_t)pid, &lost))
				w->kernel_lost = lost;
			osrt_consume();
			hd_pth_detach(w);
		}
		if (!w->kept && w->iowait_on)
			iowait_unwatch((uint32_t)pid);
		hd_disk_finish(w);
		w->stopped = true;
		nactive--;
	}
	pthread_mutex_unlock(&lock);
}

static void forget(struct hd_window *w)
{
	hd_pth_detach(w); /* a window stopped without its stop (the run's end) */
	if (w->cpu)
		fclose(w->cpu);
	if (w->mem)
		fclose(w->mem);
	if (w->disk)
		fclose(w->disk);
	if (w->net)
		fclose(w->net);
	free(w->calls);
	free(w);
}

/* The window's reason: its losses by cause (and with --host-sys-before, what its buffer dropped). */
static void say_lost(const struct hd_window *w, struct window_account *a)
{
	int n = snprintf(a->reason, sizeof(a->reason),
			 "%llu system call records lost (%llu: the kernel's ring buffer was full, %llu: past dynprof's limit of %u per window",
			 (unsigned long long)(w->kernel_lost + w->over_cap + w->before_dropped),
			 (unsigned long long)w->kernel_lost, (unsigned long long)w->over_cap,
			 HD_MAX_CALLS);

	if (n < 0 || (size_t)n >= sizeof(a->reason))
		return;
	if (w->kept)
		snprintf(a->reason + n, sizeof(a->reason) - (size_t)n,
			 ", %llu: dropped from --host-sys-before's buffer of %u per target), %llu samples dropped from it",
			 (unsigned long long)w->before_dropped, HD_KEEP_MAX_CALLS,
			 (unsigned long long)w->before_samples_dropped);
	else
		snprintf(a->reason + n, sizeof(a->reason) - (size_t)n, ")");
}

void hostdata_window_write(int pid, const char *output, struct window_account *a, struct events_close *ev)
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
	hd_trace(w, a->nprof > 0);
	/* Sorts the calls by thread: after the files, which want them by time. */
	if (ev && (w->what & HOSTSYS_OSRT) && !w->osrt_why[0])
		events_window_close_host(ev, hd_summary_json(w));
	a->host_lost = w->kernel_lost + w->over_cap + w->before_dropped + w->before_samples_dropped;
	if (a->host_lost && !a->reason[0])
		say_lost(w, a);
	forget(w);
}
