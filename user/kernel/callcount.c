// SPDX-License-Identifier: MIT
/*
 * callcount.h: loads bpf/callcount.bpf.c, attaches its one program once per
 * (process, probe) with the probe's number as the link's BPF cookie, and
 * keeps each probe's thresholds in user space, the lowest armed in the
 * kernel.
 *
 * A threshold is reported once: it leaves the probe's set when a record (or
 * a counter read) shows the count reached it, and the report carries that
 * count, which is always a count the probe really had.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "bpf/callcount.skel.h"
#include "kernel/bpfutil.h"
#include "kernel/callcount.h"
#include "dynprof/callcount.h"
#include "kernel/elfsym.h"
#include "common/grow.h"
#include "common/procstat.h"
#include "kernel/libmaps.h"
#include "kernel/linkreaper.h"
#include "kernel/probeplace.h"
#include "shared/clock.h"

_Static_assert(DP_CC_RINGBUF_BYTES >= 4096 && (DP_CC_RINGBUF_BYTES & (DP_CC_RINGBUF_BYTES - 1)) == 0,
	       "DP_CC_RINGBUF_BYTES: a power of 2, at least a page");

/* Thresholds one probe may hold at once. */
#define MAX_THRESHOLDS 4096

/*
 * A pending probe's maps are read when the process's size changed since the
 * last read, and at least every this many refreshes anyway (a dlopen and an
 * unmap of the same size between two refreshes leave the size unchanged).
 */
#define RESCAN_EVERY 50

struct probe {
	int pid;
	unsigned id;
	unsigned long long start; /* the process's start time at watch */
	char *lib, *symbol;
	struct callcount_timing t; /* kind 0: calls counted; else a timed probe */
	struct bpf_link *link;     /* NULL: pending, LIB not mapped yet */
	struct bpf_link *ret_link; /* slow: the uretprobe (link is the uprobe) */
	uint64_t attached_ns; /* CLOCK_MONOTONIC at the attach: older records are not this probe's */
	unsigned long vsize_scanned; /* pending: vsize when the maps were last read */
	unsigned skipped;            /* pending: refreshes that did not read the maps since */
	uint64_t *thr;               /* thresholds not reached yet, ascending */
	size_t nthr, thr_cap;
};

struct callcount {
	struct callcount_bpf *skel;
	struct ring_buffer *rb;
	struct linkreaper *reaper; /* closes forgotten probes' links */
	bool quiet_held;
	struct probe *p; /* unordered */
	size_t n, cap;
	unsigned long long lost_seen;
	uint32_t attaches; /* timed probes attached so far: each one's dp_tm_state.gen */
	const struct callcount_handlers *h; /* for the duration of callcount_consume */
};

/* ---- small helpers ------------------------------------------------------- */

/*
 * The identity of a process (start: clock ticks since boot) and its size
 * (vsize grows with every dlopen: a cheap "maps changed?"). 0, or -ESRCH
 * when there is no such process (or only its zombie).
 */
static int read_proc_stat(int pid, struct procstat *st)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (procstat_read(path, st))
		return -ESRCH;
	return procstat_dead(st->state) ? -ESRCH : 0;
}

static struct dp_cc_key key_of(const struct probe *p)
{
	return (struct dp_cc_key){ .tgid = (uint32_t)p->pid, .probe_id = p->id };
}

/* The reaper's tag for a probe's link. */
static uint64_t link_tag(int pid, unsigned id)
{
	return (uint64_t)(uint32_t)pid << 32 | id;
}

static ssize_t find_probe(const struct callcount *cc, int pid, unsigned id)
{
	for (size_t i = 0; i < cc->n; i++)
		if (cc->p[i].pid == pid && cc->p[i].id == id)
			return (ssize_t)i;
	return -1;
}

/* The kernel counter of an attached probe; 0 when it has none. */
static uint64_t kernel_count(const struct callcount *cc, const struct probe *p)
{
	struct dp_cc_key key = key_of(p);
	uint64_t value = 0;

	if (!p->link || bpf_map__lookup_elem(cc->skel->maps.counts, &key, sizeof(key), &value,
					     sizeof(value), 0) != 0)
		return 0;
	return value;
}

/* ---- thresholds ------------------------------------------------------------ */

/* Insert into the ascending set; an equal one is already there. */
static int threshold_add(struct probe *p, uint64_t t)
{
	size_t i = 0;

	while (i < p->nthr && p->thr[i] < t)
		i++;
	if (i < p->nthr && p->thr[i] == t)
		return 0;
	if (p->nthr == MAX_THRESHOLDS)
		return -ENOSPC;
	if (grow_for_one((void **)&p->thr, &p->thr_cap, p->nthr, sizeof(*p->thr), 4))
		return -ENOMEM;
	memmove(p->thr + i + 1, p->thr + i, (p->nthr - i) * sizeof(*p->thr));
	p->thr[i] = t;
	p->nthr++;
	return 0;
}

/* Remove the thresholds <= count; how many went. */
static size_t thresholds_reached(struct probe *p, uint64_t count)
{
	size_t k = 0;

	while (k < p->nthr && p->thr[k] <= count)
		k++;
	memmove(p->thr, p->thr + k, (p->nthr - k) * sizeof(*p->thr));
	p->nthr -= k;
	return k;
}

/*
 * Write the lowest threshold left into the kernel (none: delete the entry).
 * Written every time, not only on change: the program may have swapped the
 * old value to 0 in the meantime.
 */
static void kernel_arm(struct callcount *cc, const struct probe *p)
{
	struct dp_cc_key key = key_of(p);
	uint64_t lowest = p->nthr ? p->thr[0] : 0;

	if (!p->link)
		return;
	if (lowest)
		bpf_map__update_elem(cc->skel->maps.thresholds, &key, sizeof(key), &lowest,
				     sizeof(lowest), BPF_ANY);
	else
		bpf_map__delete_elem(cc->skel->maps.thresholds, &key, sizeof(key), 0);
}

/* Tell the caller; its handler may arm, watch or forget: no probe pointer survives it. */
static void report_fired(const struct callcount_handlers *h, int pid, unsigned id,
			 const struct callcount_fire *f)
{
	if (h && h->fired)
		h->fired(h->ctx, pid, id, f);
}

/*
 * Arm the probe's next threshold. One the counter already passed (reached
 * while the one before was being reported) fires here, with the counter as
 * read now; without handlers the kernel reports it at the next call.
 */
static void settle(struct callcount *cc, int pid, unsigned id, const struct callcount_handlers *h)
{
	for (;;) {
		ssize_t i = find_probe(cc, pid, id);
		struct probe *p;
		uint64_t now;

		if (i < 0)
			return; /* a handler forgot it */
		p = &cc->p[i];
		if (!h || !p->link || !p->nthr || p->thr[0] > (now = kernel_count(cc, p))) {
			kernel_arm(cc, p);
			return;
		}
		thresholds_reached(p, now);
		/* Read from the counter: the duration that crossed is not known. */
		report_fired(h, pid, id,
			     &(struct callcount_fire){ .count = now, .ktime_ns = clock_mono_ns() });
	}
}

/* ---- the ring buffer ---------------------------------------------------------- */

static int on_record(void *ctx, void *data, size_t size)
{
	struct callcount *cc = ctx;
	struct dp_cc_record r;
	ssize_t i;

	if (size < sizeof(r))
		return 0;
	memcpy(&r, data, sizeof(r));
	i = find_probe(cc, (int)r.tgid, r.probe_id);
	/* Forgotten since, or sent before a forget and a new watch of the same probe. */
	if (i < 0 || !cc->p[i].link || r.ktime_ns < cc->p[i].attached_ns)
		return 0;
	/* Nothing reached: a threshold reported already, from a counter read. */
	if (thresholds_reached(&cc->p[i], r.count))
		report_fired(cc->h, (int)r.tgid, r.probe_id,
			     &(struct callcount_fire){ .count = r.count,
						       .ktime_ns = r.ktime_ns,
						       .value_ns = r.value_ns,
						       .typical_ns = r.typical_ns });
	settle(cc, (int)r.tgid, r.probe_id, cc->h);
	return 0;
}

/* Records were lost to a full ring: find their thresholds from the counters. */
static void sweep(struct callcount *cc, const struct callcount_handlers *h)
{
	for (size_t i = 0; i < cc->n; i++)
		if (cc->p[i].link && cc->p[i].nthr)
			settle(cc, cc->p[i].pid, cc->p[i].id, h);
}

void callcount_consume(struct callcount *cc, const struct callcount_handlers *h)
{
	unsigned long long lost;

	if (!cc)
		return;
	cc->h = h;
	ring_buffer__consume(cc->rb);
	cc->h = NULL;
	lost = __atomic_load_n(&cc->skel->bss->records_lost, __ATOMIC_RELAXED);
	if (lost != cc->lost_seen) {
		cc->lost_seen = lost;
		sweep(cc, h);
	}
}

/* ---- opening and closing ------------------------------------------------------ */

struct callcount *callcount_open(char *err, size_t errlen)
{
	struct callcount *cc = calloc(1, sizeof(*cc));
	const char *step;
	int rc;

	if (!cc) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	rc = bpfutil_usable(err, errlen);
	if (rc) {
		free(cc);
		return NULL;
	}
	cc->reaper = linkreaper_new(); /* NULL: links close on the caller's thread */
	bpfutil_quiet_hold();
	cc->quiet_held = true;
	bpfutil_quiet_reset();

	step = "opening the BPF object";
	cc->skel = callcount_bpf__open();
	if (!cc->skel) {
		rc = -errno;
		goto fail;
	}
	step = "loading the BPF program";
	rc = callcount_bpf__load(cc->skel);
	if (rc)
		goto fail;
	step = "creating the ring buffer";
	cc->rb = ring_buffer__new(bpf_map__fd(cc->skel->maps.fired), on_record, cc, NULL);
	if (!cc->rb) {
		rc = -errno;
		goto fail;
	}
	return cc;

fail:
	bpfutil_failure(err, errlen, step, rc);
	callcount_close(cc);
	return NULL;
}

static void probe_free(struct probe *p)
{
	bpf_link__destroy(p->ret_link);
	bpf_link__destroy(p->link);
	free(p->lib);
	free(p->symbol);
	free(p->thr);
}

static void forget_where(struct callcount *cc, bool all, int pid);

void callcount_close(struct callcount *cc)
{
	if (!cc)
		return;
	forget_where(cc, true, 0);
	linkreaper_free(cc->reaper); /* waits for every link to close */
	free(cc->p);
	ring_buffer__free(cc->rb);
	callcount_bpf__destroy(cc->skel);
	if (cc->quiet_held)
		bpfutil_quiet_release();
	free(cc);
}

int callcount_fd(const struct callcount *cc)
{
	return cc ? ring_buffer__epoll_fd(cc->rb) : -EINVAL;
}

/* ---- attaching ---------------------------------------------------------------- */

/* Where a probe goes in the file: the instruction chosen (probeplace.h), for the entry and return probes. */
struct probe_at {
	uint64_t probe;
};

/* The entry program of a probe's kind. */
static struct bpf_program *entry_program(struct callcount *cc, const struct probe *p)
{
	switch (p->t.kind) {
	case DP_TM_SLOW:
		return cc->skel->progs.dp_slow_entry;
	case DP_TM_GAP:
	case DP_TM_STALL:
		return cc->skel->progs.dp_gap_entry;
	default:
		return cc->skel->progs.dp_count_call;
	}
}

/* A timed probe's limit, its measurements at 0: written once, before the attach. */
static int timing_insert(struct callcount *cc, const struct probe *p)
{
	struct dp_cc_key key = key_of(p);
	struct dp_tm_state st = { .kind = (uint32_t)p->t.kind,
				  .mult_milli = p->t.mult_milli,
				  .limit_ns = p->t.limit_ns,
				  .gen = ++cc->attaches };

	if (!p->t.kind)
		return 0;
	return bpf_map__update_elem(cc->skel->maps.timing, &key, sizeof(key), &st, sizeof(st), BPF_ANY);
}

static void maps_delete(struct callcount *cc, const struct probe *p)
{
	struct dp_cc_key key = key_of(p);

	bpf_map__delete_elem(cc->skel->maps.counts, &key, sizeof(key), 0);
	bpf_map__delete_elem(cc->skel->maps.thresholds, &key, sizeof(key), 0);
	if (p->t.kind)
		bpf_map__delete_elem(cc->skel->maps.timing, &key, sizeof(key), 0);
}

/* The probe's links: the entry, and for slow: the return. 0 or -errno with the line. */
static int attach_links(struct callcount *cc, struct probe *p, const char *host_path,
			const struct probe_at *at, char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .bpf_cookie = p->id);
	char step[PATH_MAX + 128];
	int rc;

	bpfutil_quiet_reset();
	if (p->t.kind == DP_TM_SLOW) {
		/*
		 * The return probe first: a call that entered before the entry
		 * probe is then ignored at its return, where the other order
		 * would leave its thread one level deep for good.
		 * A uretprobe must see the return address on top of the stack:
		 * at the entry, or past an endbr64 (probeplace.h), where it also
		 * shares the entry probe's breakpoint, one trap for both.
		 */
		LIBBPF_OPTS(bpf_uprobe_opts, ropts, .bpf_cookie = p->id, .retprobe = true);

		p->ret_link = bpf_program__attach_uprobe_opts(cc->skel->progs.dp_slow_return, p->pid,
							      host_path, (size_t)at->probe, &ropts);
		if (!p->ret_link)
			goto failed;
	}
	p->link = bpf_program__attach_uprobe_opts(entry_program(cc, p), p->pid, host_path,
						  (size_t)at->probe, &opts);
	if (p->link)
		return 0;
failed:
	rc = -errno;
	bpf_link__destroy(p->ret_link);
	p->ret_link = NULL;
	errno = -rc;
	snprintf(step, sizeof(step), "pid %d: attaching a %s to %s in %s", p->pid,
		 p->t.kind == DP_TM_SLOW ? "uprobe and uretprobe" : "uprobe", p->symbol, host_path);
	bpfutil_failure(err, errlen, step, rc);
	return rc;
}

/* Count from 0, then attach: calls between the two are counted. */
static int attach(struct callcount *cc, struct probe *p, const char *host_path,
		  const struct probe_at *at, char *err, size_t errlen)
{
	struct dp_cc_key key = key_of(p);
	uint64_t zero = 0;
	int rc;

	/* A forgotten link of this probe, still attached, would count with this one. */
	linkreaper_wait(cc->reaper, link_tag(p->pid, p->id));
	bpf_map__delete_elem(cc->skel->maps.thresholds, &key, sizeof(key), 0);
	rc = bpf_map__update_elem(cc->skel->maps.counts, &key, sizeof(key), &zero, sizeof(zero), BPF_ANY);
	if (!rc && (rc = timing_insert(cc, p)))
		bpf_map__delete_elem(cc->skel->maps.counts, &key, sizeof(key), 0);
	if (rc) {
		if (rc == -E2BIG || rc == -ENOMEM)
			rc = -ENOSPC;
		snprintf(err, errlen, "pid %d: cannot count probe %u: %s (at most %d probes)",
			 p->pid, p->id, strerror(-rc), DP_CC_MAX_PROBES);
		return rc;
	}
	rc = attach_links(cc, p, host_path, at, err, errlen);
	if (rc) {
		maps_delete(cc, p);
		return rc;
	}
	p->attached_ns = clock_mono_ns();
	kernel_arm(cc, p);
	return CALLCOUNT_ATTACHED;
}

/*
 * elfsym_find through /proc/<pid>/root, its line saying the path as the
 * process sees it: "pid 42: no function f in /usr/lib/libfoo.so".
 */
static int find_symbol(const struct probe *p, const char *host_path, struct elfsym *sym, char *err,
		       size_t errlen)
{
	char root[48], line[PATH_MAX + 256];
	const char *at;
	size_t cut;
	int rc = elfsym_find(host_path, p->symbol, sym, line, sizeof(line));

	if (!rc)
		return 0;
	snprintf(root, sizeof(root), "/proc/%d/root", p->pid);
	at = strstr(line, root);
	cut = at ? strlen(root) : 0;
	if (!at)
		at = line + strlen(line);
	snprintf(err, errlen, "pid %d: %.*s%s", p->pid, (int)(at - line), line, at + cut);
	return rc;
}

/*
 * LIB is not mapped: a path must at least exist in the process's
 * filesystem and hold the symbol (checked now, not at dlopen); a name can
 * only be waited for.
 */
static int not_mapped(const struct probe *p, char *err, size_t errlen)
{
	char host_path[PATH_MAX + 32];
	struct elfsym sym;
	int rc;

	if (!strchr(p->lib, '/'))
		return CALLCOUNT_NOT_MAPPED;
	snprintf(host_path, sizeof(host_path), "/proc/%d/root%s%s", p->pid,
		 p->lib[0] == '/' ? "" : "/", p->lib);
	if (access(host_path, F_OK) != 0) {
		rc = errno == ENOENT ? -ENOENT : -errno;
		snprintf(err, errlen, "pid %d: %s: %s", p->pid, p->lib, strerror(-rc));
		return rc;
	}
	rc = find_symbol(p, host_path, &sym, err, errlen);
	return rc ? rc : CALLCOUNT_NOT_MAPPED;
}

/*
 * Where the probe goes (probeplace.h): the function's first bytes, as
 * elfsym_find read them. DYNPROF_PROBE_AT_ENTRY=1 keeps the first
 * instruction (for bench/triggers.sh's before/after); unread bytes keep it too.
 */
_Static_assert(ELFSYM_CODE_BYTES >= PROBEPLACE_BYTES, "elfsym keeps the bytes probeplace looks at");
static struct probe_at place(const struct elfsym *sym)
{
	struct probe_at at = { sym->offset };
	const char *entry = getenv("DYNPROF_PROBE_AT_ENTRY");

	if (entry && !strcmp(entry, "1"))
		return at;
	if (sym->code_len)
		at.probe += probeplace_skip(sym->code, sym->code_len, sym->size);
	return at;
}

/* Find LIB in the process, SYMBOL in LIB, and attach. ATTACHED, NOT_MAPPED or -errno. */
static int try_attach(struct callcount *cc, struct probe *p, char *path_out, size_t path_len,
		      char *err, size_t errlen)
{
	struct libmaps_hit *hit = malloc(sizeof(*hit)); /* two PATH_MAX buffers: not on the stack */
	struct elfsym sym;
	int rc;

	if (!hit) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = libmaps_find(p->pid, p->lib, hit);
	if (rc == -ENOENT)
		rc = not_mapped(p, err, errlen);
	else if (rc == -ESRCH)
		snprintf(err, errlen, "no process %d", p->pid);
	else if (rc == -ESTALE)
		snprintf(err, errlen,
			 "pid %d maps %s from a deleted file (replaced or removed since it was "
			 "loaded): its code cannot be probed",
			 p->pid, hit->path);
	else if (rc < 0)
		snprintf(err, errlen, "/proc/%d/maps: %s", p->pid, strerror(-rc));
	else if ((rc = find_symbol(p, hit->host_path, &sym, err, errlen)) == 0) {
		struct probe_at at = place(&sym);

		rc = attach(cc, p, hit->host_path, &at, err, errlen);
	}
	if (rc == CALLCOUNT_ATTACHED && path_out)
		snprintf(path_out, path_len, "%s", hit->path);
	free(hit);
	return rc;
}

int callcount_check_pid(int pid, const char *lib, const char *symbol, char *err, size_t errlen)
{
	struct probe p = { .pid = pid, .lib = (char *)lib, .symbol = (char *)symbol };
	struct libmaps_hit *hit = malloc(sizeof(*hit));
	struct elfsym sym;
	int rc;

	if (!hit) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = libmaps_find(pid, lib, hit);
	if (rc == -ENOENT)
		rc = not_mapped(&p, err, errlen);
	else if (rc == 0)
		rc = find_symbol(&p, hit->host_path, &sym, err, errlen);
	else
		rc = 0; /* no process, a deleted file, unreadable maps: the join says why */
	free(hit);
	return rc == CALLCOUNT_NOT_MAPPED ? 0 : rc;
}

const char *callcount_err_text(const char *err, int pid)
{
	char prefix[24];
	int n = snprintf(prefix, sizeof(prefix), "pid %d: ", pid);

	return !strncmp(err, prefix, (size_t)n) ? err + n : err;
}

/* ---- the probe table ------------------------------------------------------------ */

static struct probe *probe_add(struct callcount *cc, int pid, unsigned id, const char *lib,
			       const char *symbol, unsigned long long start)
{
	struct probe *p;

	if (grow_for_one((void **)&cc->p, &cc->cap, cc->n, sizeof(*cc->p), 8))
		return NULL;
	p = &cc->p[cc->n];
	*p = (struct probe){
		.pid = pid, .id = id, .start = start, .lib = strdup(lib), .symbol = strdup(symbol)
	};
	if (!p->lib || !p->symbol) {
		probe_free(p);
		return NULL;
	}
	cc->n++;
	return p;
}

/* Drop probe i, which has no link: pending, or failed before it was attached. */
static void probe_drop(struct callcount *cc, size_t i)
{
	probe_free(&cc->p[i]);
	cc->p[i] = cc->p[--cc->n];
}

/*
 * Drop the probes of `pid` (all of them with `all`). Their entries go
 * first, so from now on their calls find nothing to count; their links go
 * to the reaper, closing one takes ~100 ms (linkreaper.h).
 */
static void forget_where(struct callcount *cc, bool all, int pid)
{
	for (size_t i = cc->n; i-- > 0;) {
		struct probe *p = &cc->p[i];

		if (!all && p->pid != pid)
			continue;
		if (p->link) {
			maps_delete(cc, p);
			linkreaper_add(cc->reaper, p->link, link_tag(p->pid, p->id));
			if (p->ret_link)
				linkreaper_add(cc->reaper, p->ret_link, link_tag(p->pid, p->id));
			p->link = p->ret_link = NULL;
		}
		probe_drop(cc, i);
	}
}

/* ---- the API ----------------------------------------------------------------------- */

int callcount_watch(struct callcount *cc, int pid, unsigned probe_id, const char *lib,
		    const char *symbol, char *err, size_t errlen)
{
	return callcount_watch_timed(cc, pid, probe_id, lib, symbol, NULL, err, errlen);
}

int callcount_watch_timed(struct callcount *cc, int pid, unsigned probe_id, const char *lib,
			  const char *symbol, const struct callcount_timing *t, char *err, size_t errlen)
{
	char local[8];
	struct procstat st;
	struct probe *p;
	int rc;

	if (!err)
		err = local, errlen = sizeof(local);
	if (!cc || pid <= 0 || !lib || !*lib || !symbol || !*symbol) {
		snprintf(err, errlen, "no process, library or symbol");
		return -EINVAL;
	}
	if (find_probe(cc, pid, probe_id) >= 0) {
		snprintf(err, errlen, "pid %d: probe %u is already counted", pid, probe_id);
		return -EEXIST;
	}
	if (read_proc_stat(pid, &st) != 0) {
		snprintf(err, errlen, "no process %d", pid);
		return -ESRCH;
	}
	p = probe_add(cc, pid, probe_id, lib, symbol, st.start);
	if (!p) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	p->vsize_scanned = st.vsize;
	if (t)
		p->t = *t;
	rc = try_attach(cc, p, NULL, 0, err, errlen);
	if (rc < 0)
		probe_drop(cc, cc->n - 1);
	return rc;
}

int callcount_arm(struct callcount *cc, int pid, unsigned probe_id, uint64_t threshold)
{
	ssize_t i = cc ? find_probe(cc, pid, probe_id) : -1;
	int rc;

	if (i < 0)
		return -ENOENT;
	if (threshold == 0)
		return -EINVAL;
	rc = threshold_add(&cc->p[i], threshold);
	if (!rc)
		kernel_arm(cc, &cc->p[i]);
	return rc;
}

int callcount_timing_read(const struct callcount *cc, int pid, unsigned probe_id,
			  struct callcount_typical *out)
{
	ssize_t i = cc ? find_probe(cc, pid, probe_id) : -1;
	struct dp_cc_key key;
	struct dp_tm_state st;

	if (i < 0 || !cc->p[i].link || !cc->p[i].t.kind)
		return -ENOENT;
	key = key_of(&cc->p[i]);
	if (bpf_map__lookup_elem(cc->skel->maps.timing, &key, sizeof(key), &st, sizeof(st), 0))
		return -ENOENT;
	*out = (struct callcount_typical){ .samples = st.samples,
					   .typical_ns = st.typical_ns,
					   .last_ns = st.last_ns,
					   .calls = st.calls };
	return 0;
}

uint64_t callcount_read(struct callcount *cc, int pid, unsigned probe_id)
{
	ssize_t i = cc ? find_probe(cc, pid, probe_id) : -1;

	return i < 0 ? 0 : kernel_count(cc, &cc->p[i]);
}

/*
 * One pending probe: still the same live process? Mappings grown since the
 * last look? Then look. A probe that can never count leaves the table.
 */
static void refresh_one(struct callcount *cc, size_t i, const struct callcount_handlers *h)
{
	struct probe *p = &cc->p[i];
	char why[PATH_MAX + 256], path[PATH_MAX];
	struct procstat st;
	int rc;

	if (read_proc_stat(p->pid, &st) != 0 || st.start != p->start) {
		snprintf(why, sizeof(why), "pid %d exited before %s was mapped", p->pid, p->lib);
		rc = -ESRCH;
	} else if (st.vsize == p->vsize_scanned && ++p->skipped < RESCAN_EVERY) {
		return; /* nothing mapped since: a dlopen grows the process */
	} else {
		p->vsize_scanned = st.vsize;
		p->skipped = 0;
		rc = try_attach(cc, p, path, sizeof(path), why, sizeof(why));
	}
	if (rc == CALLCOUNT_NOT_MAPPED)
		return;
	if (rc == CALLCOUNT_ATTACHED) {
		if (h && h->attached)
			h->attached(h->ctx, p->pid, p->id, path);
		return;
	}
	if (h && h->failed)
		h->failed(h->ctx, p->pid, p->id, why);
	probe_drop(cc, i);
}

void callcount_refresh(struct callcount *cc, const struct callcount_handlers *h)
{
	if (!cc)
		return;
	/*
	 * Backwards: a dropped probe's slot takes the last one, already seen.
	 * A handler that forgets probes may make this round miss some.
	 */
	for (size_t i = cc->n; i-- > 0;)
		if (i < cc->n && !cc->p[i].link)
			refresh_one(cc, i, h);
}

int callcount_pending(const struct callcount *cc)
{
	if (!cc)
		return 0;
	for (size_t i = 0; i < cc->n; i++)
		if (!cc->p[i].link)
			return 1;
	return 0;
}

void callcount_forget(struct callcount *cc, int pid)
{
	if (cc)
		forget_where(cc, false, pid);
}

int callcount_check_file(const char *path, const char *symbol, char *err, size_t errlen)
{
	struct elfsym sym;
	char local[8];

	if (!err)
		err = local, errlen = sizeof(local);
	return elfsym_find(path, symbol, &sym, err, errlen);
}
