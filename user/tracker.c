// SPDX-License-Identifier: MIT
/* Keeping the process model current (see tracker.h). */
#include <errno.h>
#include <stdlib.h>

#include "discover.h"
#include "dynprof/fdio.h"
#include "tracker.h"

struct tracker {
	struct procmodel *model;
	struct discover *disc;    /* NULL without BPF */
	unsigned long long lost;  /* lost events already answered by a rescan */
	unsigned rescans;
	int64_t next_poll_ms;     /* without BPF: next /proc scan */
	int64_t next_socket_ms;   /* next socket re-check */
};

static void apply_event(void *ctx, const struct dp_event *e)
{
	procmodel_apply(ctx, e);
}

/* Tell the kernel filter which device numbers are cards. */
static void register_cards(struct tracker *t)
{
	struct dp_card_dev devs[DP_MAX_CARD_DEVS];
	int index[DP_MAX_CARD_DEVS];
	int n = procmodel_card_devs(t->model, devs, index, DP_MAX_CARD_DEVS);

	for (int i = 0; i < n; i++)
		discover_add_card(t->disc, devs[i].major, devs[i].minor, index[i]);
}

static void open_kernel_side(struct tracker *t, const char **note)
{
	t->disc = discover_open_tracking(true, note);
	if (t->disc && !discover_uses_bpf(t->disc)) {
		discover_close(t->disc);
		t->disc = NULL;
	}
	if (t->disc)
		register_cards(t);
}

struct tracker *tracker_open(const struct card_patterns *patterns, bool use_bpf,
			     pm_listener listener, void *ctx, bool report_initial,
			     const char **note)
{
	struct tracker *t = calloc(1, sizeof(*t));

	*note = NULL;
	if (!t)
		return NULL;
	t->model = procmodel_new(patterns);
	if (!t->model) {
		free(t);
		return NULL;
	}
	/* Events first, so nothing that happens during the scan is missed. */
	if (use_bpf)
		open_kernel_side(t, note);
	else
		*note = "BPF not used (--no-bpf): polling /proc every 200 ms";
	if (report_initial)
		procmodel_set_listener(t->model, listener, ctx);
	procmodel_scan(t->model);
	procmodel_set_listener(t->model, listener, ctx);
	t->next_poll_ms = clock_ms() + TRACKER_POLL_MS;
	t->next_socket_ms = clock_ms() + TRACKER_SOCKET_MS;
	return t;
}

void tracker_close(struct tracker *t)
{
	if (!t)
		return;
	if (t->disc)
		discover_close(t->disc);
	procmodel_free(t->model);
	free(t);
}

int tracker_fd(const struct tracker *t)
{
	return t->disc ? discover_fd(t->disc) : -1;
}

int tracker_timeout_ms(const struct tracker *t)
{
	int64_t next = t->next_socket_ms;

	if (!t->disc && t->next_poll_ms < next)
		next = t->next_poll_ms;
	return clock_ms_left(next);
}

/*
 * Polling must not become the host's load: on a host with thousands of
 * processes a scan takes ~100 ms, so the period stretches to ten scans.
 */
static int poll_period(int64_t scan_ms)
{
	return scan_ms * 10 > TRACKER_POLL_MS ? (int)(scan_ms * 10) : TRACKER_POLL_MS;
}

static void rescan(struct tracker *t)
{
	t->rescans++;
	register_cards(t); /* nodes made since the last scan */
	procmodel_scan(t->model);
}

void tracker_tick(struct tracker *t)
{
	int64_t now;

	if (t->disc) {
		discover_consume_events(t->disc, apply_event, t->model);
		/* Lost events: only a full scan can tell what they were. */
		if (discover_lost_events(t->disc) != t->lost) {
			t->lost = discover_lost_events(t->disc);
			rescan(t);
		}
	}
	now = clock_ms();
	if (!t->disc && now >= t->next_poll_ms) {
		procmodel_scan(t->model);
		t->next_poll_ms = clock_ms() + poll_period(clock_ms() - now);
	}
	if (now >= t->next_socket_ms) {
		procmodel_refresh_sockets(t->model);
		t->next_socket_ms = now + TRACKER_SOCKET_MS;
	}
}

bool tracker_uses_bpf(const struct tracker *t)
{
	return t->disc != NULL;
}

unsigned long long tracker_lost_events(const struct tracker *t)
{
	return t->disc ? discover_lost_events(t->disc) : 0;
}

unsigned tracker_rescans(const struct tracker *t)
{
	return t->rescans;
}

struct procmodel *tracker_model(struct tracker *t)
{
	return t->model;
}
