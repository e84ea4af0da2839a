// SPDX-License-Identifier: MIT
/*
 * --host-sys-before: each target's host data of the last DURATION, kept
 * from its join (see hostdata_impl.h). Calls and samples sit in two rings
 * bounded by count and bytes; the oldest is pushed out past a cap, and
 * counted when it was still within DURATION. A window opening takes the
 * slice since its begin. The caller (hostdata.c) holds its lock.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/hostsys.h"
#include "hostdata/hostdata_impl.h"

static void drops_init(struct hd_drops *d, uint64_t keep_ns)
{
	/* Two slots of room: the span's first and last slots may be partial. */
	d->gran_ns = keep_ns / (HD_DROP_SLOTS - 2) + 1;
}

static void drops_add(struct hd_drops *d, uint64_t t, uint64_t n)
{
	uint64_t s = t / d->gran_ns;
	size_t i = (size_t)(s % HD_DROP_SLOTS);

	if (d->slot[i] != s + 1) {
		d->slot[i] = s + 1;
		d->n[i] = 0;
	}
	d->n[i] += n;
}

/* The counts from `since` to now (to one slot's width). */
static uint64_t drops_since(const struct hd_drops *d, uint64_t since, uint64_t now)
{
	uint64_t from = since / d->gran_ns + 1, to = now / d->gran_ns + 1, sum = 0;

	for (size_t i = 0; i < HD_DROP_SLOTS; i++)
		if (d->slot[i] >= from && d->slot[i] <= to)
			sum += d->n[i];
	return sum;
}

struct hd_keep *hd_keep_new(int pid, unsigned what, uint64_t keep_ns)
{
	struct hd_keep *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	k->w.pid = pid;
	k->w.what = what;
	k->w.keeper = true;
	k->keep_ns = keep_ns;
	drops_init(&k->dropped, keep_ns);
	drops_init(&k->sdropped, keep_ns);
	drops_init(&k->klost, keep_ns);
	return k;
}

static void sample_pop(struct hd_keep *k)
{
	struct hd_kept_sample *s = &k->samples[k->shead];

	k->sbytes -= s->len;
	free(s->text);
	s->text = NULL;
	k->shead = (k->shead + 1) % k->scap;
	k->sn--;
}

void hd_keep_free(struct hd_keep *k)
{
	if (!k)
		return;
	while (k->sn)
		sample_pop(k);
	free(k->samples);
	free(k->ring);
	free(k);
}

/* Room for one more call: the ring grown, else its oldest pushed out (counted if in the span). */
static bool call_room(struct hd_keep *k, uint64_t newest)
{
	const struct dp_osrt_call *old;

	if (k->n < k->cap)
		return true;
	if (k->cap < HD_KEEP_MAX_CALLS) {
		size_t cap = k->cap ? k->cap * 2 : 4096;
		struct dp_osrt_call *p;

		cap = cap > HD_KEEP_MAX_CALLS ? HD_KEEP_MAX_CALLS : cap;
		p = malloc(cap * sizeof(*p));
		if (p) {
			for (size_t i = 0; i < k->n; i++) /* unwrapped: the oldest first */
				p[i] = k->ring[(k->head + i) % k->cap];
			free(k->ring);
			k->ring = p;
			k->cap = cap;
			k->head = 0;
			return true;
		}
	}
	if (!k->n) /* no memory for a first ring */
		return false;
	old = &k->ring[k->head];
	if (old->entry_ns + k->keep_ns >= newest)
		drops_add(&k->dropped, old->entry_ns, 1);
	k->head = (k->head + 1) % k->cap;
	k->n--;
	return true;
}

void hd_keep_call(struct hd_keep *k, const struct dp_osrt_call *c)
{
	uint64_t newest = c->entry_ns + c->dur_ns; /* about now: it just ended */

	/* Older than the span: gone, not dropped (records come about in the order they end). */
	while (k->n && k->ring[k->head].entry_ns + k->keep_ns < newest) {
		k->head = (k->head + 1) % k->cap;
		k->n--;
	}
	if (!call_room(k, newest)) {
		drops_add(&k->dropped, c->entry_ns, 1);
		return;
	}
	k->ring[(k->head + k->n) % k->cap] = *c;
	k->n++;
}

/* What the last sample added to f, taken out of it (f is emptied); NULL: nothing. */
static char *take_text(FILE *f, size_t *len)
{
	long end;
	char *text;

	*len = 0;
	if (!f || fflush(f) || (end = ftell(f)) <= 0)
		return NULL;
	text = malloc((size_t)end);
	rewind(f);
	if (text && fread(text, 1, (size_t)end, f) == (size_t)end)
		*len = (size_t)end;
	rewind(f);
	if (ftruncate(fileno(f), 0)) {
		/* a tmpfile we own: then the next take reads from 0 all the same */
	}
	if (!*len) {
		free(text);
		return NULL;
	}
	return text;
}

static bool sample_room(struct hd_keep *k, size_t len, uint64_t newest)
{
	while (k->sn && (k->sn == HD_KEEP_MAX_SAMPLES || k->sbytes + len > HD_KEEP_MAX_SAMPLE_BYTES ||
			 k->samples[k->shead].raw + k->keep_ns < newest)) {
		if (k->samples[k->shead].raw + k->keep_ns >= newest)
			drops_add(&k->sdropped, k->samples[k->shead].raw, 1);
		sample_pop(k);
	}
	if (!k->samples) {
		k->samples = calloc(HD_KEEP_MAX_SAMPLES, sizeof(*k->samples));
		k->scap = k->samples ? HD_KEEP_MAX_SAMPLES : 0;
	}
	return k->samples && len <= HD_KEEP_MAX_SAMPLE_BYTES;
}

static void keep_text(struct hd_keep *k, FILE *f, unsigned kind)
{
	size_t len;
	char *text = take_text(f, &len);
	struct hd_kept_sample *s;

	if (!text)
		return;
	if (!sample_room(k, len, k->w.last_raw)) {
		drops_add(&k->sdropped, k->w.last_raw, 1);
		free(text);
		return;
	}
	s = &k->samples[(k->shead + k->sn) % k->scap];
	*s = (struct hd_kept_sample){ k->w.last_raw, kind, len, text };
	k->sn++;
	k->sbytes += len;
}

/* A disk reading kept as its counters ("<read> <written> <iowait>"): rows are a window's to make. */
static void keep_disk(struct hd_keep *k)
{
	struct hd_disk_reading r;
	char *text;
	int len;

	if (hd_disk_read(&k->w, &r))
		return; /* gone or unreadable: the window's own sampling says why */
	len = asprintf(&text, "%" PRIu64 " %" PRIu64 " %" PRIu64, r.rb, r.wb, r.io_ns);
	if (len < 0)
		return;
	if (!sample_room(k, (size_t)len, k->w.last_raw)) {
		drops_add(&k->sdropped, k->w.last_raw, 1);
		free(text);
		return;
	}
	k->samples[(k->shead + k->sn) % k->scap] =
		(struct hd_kept_sample){ k->w.last_raw, HOSTSYS_DISK, (size_t)len, text };
	k->sn++;
	k->sbytes += (size_t)len;
}

void hd_keep_sample(struct hd_keep *k, const char *uptime)
{
	bool disk = k->w.what & HOSTSYS_DISK;

	if (!k->w.cpu && !k->w.mem && !k->w.net && !disk)
		return;
	hd_sample(&k->w, uptime);
	keep_text(k, k->w.cpu, HOSTSYS_CPU);
	keep_text(k, k->w.mem, HOSTSYS_MEM);
	keep_text(k, k->w.net, HOSTSYS_NET);
	if (disk)
		keep_disk(k);
}

void hd_keep_lost(struct hd_keep *k, uint64_t total, uint64_t now_mono)
{
	if (total > k->kernel_seen)
		drops_add(&k->klost, now_mono, total - k->kernel_seen);
	k->kernel_seen = total;
}

static void give_calls(struct hd_keep *k, struct hd_window *w, uint64_t now_mono)
{
	snprintf(w->osrt_why, sizeof(w->osrt_why), "%s", k->w.osrt_why);
	snprintf(w->pth_lib, sizeof(w->pth_lib), "%s", k->w.pth_lib);
	snprintf(w->pth_why, sizeof(w->pth_why), "%s", k->w.pth_why);
	w->before_dropped = drops_since(&k->dropped, w->begin_mono, now_mono);
	w->kernel_lost = drops_since(&k->klost, w->begin_mono, now_mono);
	w->kernel_base = k->kernel_seen;
	if (!k->n)
		return;
	w->calls = malloc(k->n * sizeof(*w->calls));
	if (!w->calls) {
		w->over_cap += k->n;
		return;
	}
	w->cap = k->n;
	for (size_t i = 0; i < k->n; i++) {
		const struct dp_osrt_call *c = &k->ring[(k->head + i) % k->cap];

		if (c->entry_ns >= w->begin_mono)
			w->calls[w->ncalls++] = *c;
	}
	w->before_calls = w->ncalls;
}

static FILE *sample_file(struct hd_window *w, unsigned kind)
{
	return kind == HOSTSYS_CPU ? w->cpu : kind == HOSTSYS_MEM ? w->mem : w->net;
}

static void give_samples(struct hd_keep *k, struct hd_window *w, uint64_t now_mono)
{
	w->before_samples_dropped =
		drops_since(&k->sdropped, w->begin_raw, now_mono - (uint64_t)w->mono_minus_raw);
	for (size_t i = 0; i < k->sn; i++) {
		const struct hd_kept_sample *s = &k->samples[(k->shead + i) % k->scap];
		FILE *f = s->kind == HOSTSYS_DISK ? w->disk : sample_file(w, s->kind);
		struct hd_disk_reading r;

		if (s->raw < w->begin_raw || !f)
			continue;
		if (s->kind == HOSTSYS_DISK) {
			if (sscanf(s->text, "%" SCNu64 " %" SCNu64 " %" SCNu64, &r.rb, &r.wb,
				   &r.io_ns) == 3)
				hd_disk_take(w, s->raw, &r);
			w->before_samples++;
			continue;
		}
		fwrite(s->text, 1, s->len, f);
		w->before_samples++;
		w->cpu_blocks += s->kind == HOSTSYS_CPU;
		w->mem_lines += s->kind == HOSTSYS_MEM;
		w->net_blocks += s->kind == HOSTSYS_NET;
	}
}

void hd_keep_give(struct hd_keep *k, struct hd_window *w, uint64_t now_mono)
{
	if (w->what & HOSTSYS_OSRT)
		give_calls(k, w, now_mono);
	give_samples(k, w, now_mono);
	if (k->w.sample_why[0] && !w->sample_why[0])
		snprintf(w->sample_why, sizeof(w->sample_why), "%s", k->w.sample_why);
}
