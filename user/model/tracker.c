// SPDX-License-Identifier: MIT
/* Keeping the process model current (see tracker.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/discover.h"
#include "shared/clock.h"
#include "kernel/proc_connector.h"
#include "report/report.h"
#include "model/opencheck.h"
#include "model/tracker.h"
#include "sock/socklocate.h"

struct tracker {
	struct procmodel *model;
	struct discover *disc;     /* NULL without BPF */
	bool closes;               /* disc reports card closes (the syscall hooks) */
	struct opencheck *pending; /* card opens to confirm (the cgroup device hook) */
	bool owe_scan;             /* a confirmation could not wait: rescan /proc */
	int64_t next_cards_ms;     /* without close events: next re-read of card holders' fds */
	int cards_period_ms;
	size_t cards_cursor;         /* where the card holders' pass under way goes on */
	int64_t cards_work_ms;       /* the time that pass has taken so far */
	struct proc_connector *conn; /* without BPF, where it can be used; else NULL */
	bool polling;                /* without BPF: /proc scanned every poll period */
	unsigned long long lost;     /* lost events already answered by a rescan */
	unsigned rescans;
	int64_t next_poll_ms;   /* without BPF: next /proc scan */
	int64_t next_socket_ms; /* next socket re-check (or its next slice) */
	size_t socket_cursor;   /* where the pass under way goes on */
	int64_t next_glob_ms;   /* next look for new card nodes (BPF mode) */
	bool told_filter_full;  /* the kernel card filter's -ENOSPC was reported */
	int64_t retry_ms;       /* a rescan owed after lost events failed: not again before */
	int owed_err;           /* how it failed (still failing while it waits) */
	int poll_err, glob_err; /* the last poll of /proc, look for card nodes: 0 or -errno */
	bool failing;           /* a step of tracker_tick failed and has not worked since */
	char note[320];         /* tracker_open's *note */
};

static void apply_event(void *ctx, const struct dp_event *e)
{
	procmodel_apply(ctx, e);
}

/*
 * A BPF event. A card open from the device check is tried at once, and
 * kept for more tries if the fds do not show it yet (opencheck.h).
 */
static void apply_bpf_event(void *ctx, const struct dp_event *e)
{
	struct tracker *t = ctx;
	int rc;

	if (e->type != DP_EVENT_CARD_OPEN || e->fd != DP_FD_UNCONFIRMED) {
		procmodel_apply(t->model, e);
		return;
	}
	rc = procmodel_confirm_open(t->model, e);
	if ((rc == 0 || rc == -EACCES) && opencheck_add(t->pending, e, clock_ms()))
		t->owe_scan = true;
}

/*
 * Tell the kernel filter which device numbers are cards. Its map keeps
 * nodes that are gone, so nodes that come and go can fill it: opens of
 * the nodes left out are not seen, which is said once.
 */
static void register_cards(struct tracker *t)
{
	struct dp_card_dev devs[DP_MAX_CARD_DEVS];
	int index[DP_MAX_CARD_DEVS];
	int n = procmodel_card_devs(t->model, devs, index, DP_MAX_CARD_DEVS);
	int left_out = 0;

	for (int i = 0; i < n; i++)
		if (discover_add_card(t->disc, devs[i].major, devs[i].minor, index[i]) == -ENOSPC)
			left_out++;
	if (left_out && !t->told_filter_full) {
		t->told_filter_full = true;
		report_warning("the kernel's card filter is full (%d card nodes): it does not "
			       "report opens of %d other card node%s",
			       DP_MAX_CARD_DEVS, left_out, left_out == 1 ? "" : "s");
	}
}

/*
 * Without BPF: the process connector for forks, execs and exits, polling
 * for card opens (no connector event tells of them). `why` says why not
 * BPF. The connector reports a thread group leader's exit as the
 * process's: a main thread that ends before the others (pthread_exit) or
 * an exec from another thread reads as an exit (and an exec), which the
 * next poll puts right.
 */
static void open_no_bpf(struct tracker *t, const char *why)
{
	int err = proc_connector_open(&t->conn);

	t->polling = true;
	if (!err)
		snprintf(t->note, sizeof(t->note),
			 "%s: process events from the netlink process "
			 "connector, card opens by polling /proc every %d ms",
			 why, TRACKER_POLL_MS);
	else
		snprintf(t->note, sizeof(t->note),
			 "%s, no process connector (%s): polling /proc "
			 "every %d ms",
			 why, proc_connector_strerror(err), TRACKER_POLL_MS);
}

static void open_kernel_side(struct tracker *t)
{
	const char *why = NULL;

	const char *hook;

	t->disc = discover_open_tracking(true, &why);
	if (t->disc && !discover_uses_bpf(t->disc)) {
		discover_close(t->disc);
		t->disc = NULL;
	}
	if (!t->disc) {
		open_no_bpf(t, why ? why : "BPF not used");
		return;
	}
	hook = discover_open_hook(t->disc, &t->closes);
	if (hook)
		snprintf(t->note, sizeof(t->note), "%s", hook);
	register_cards(t);
}

struct tracker *tracker_open(const struct card_patterns *patterns, enum tracker_mode mode,
			     pm_listener listener, void *ctx, bool report_initial, const char **note)
{
	struct tracker *t = calloc(1, sizeof(*t));
	int err;

	*note = NULL;
	if (!t)
		return NULL;
	t->model = procmodel_new(patterns);
	t->pending = opencheck_new();
	if (!t->model || !t->pending) {
		procmodel_free(t->model);
		opencheck_free(t->pending);
		free(t);
		return NULL;
	}
	/* Events first, so nothing that happens during the scan is missed. */
	if (mode == TRACKER_BPF)
		open_kernel_side(t);
	else if (mode == TRACKER_NO_BPF)
		open_no_bpf(t, "BPF not used (--no-bpf)");
	if (t->note[0])
		*note = t->note;
	if (report_initial)
		procmodel_set_listener(t->model, listener, ctx);
	err = procmodel_scan(t->model);
	if (err) { /* an empty model would read as "no card users" */
		*note = NULL;
		tracker_close(t);
		errno = -err;
		return NULL;
	}
	procmodel_set_listener(t->model, listener, ctx);
	t->next_poll_ms = clock_ms() + TRACKER_POLL_MS;
	t->next_socket_ms = clock_ms() + TRACKER_SOCKET_MS;
	t->next_glob_ms = clock_ms() + TRACKER_CARD_GLOB_MS;
	t->cards_period_ms = TRACKER_CARD_CHECK_MS;
	t->next_cards_ms = clock_ms() + t->cards_period_ms;
	return t;
}

void tracker_close(struct tracker *t)
{
	if (!t)
		return;
	if (t->disc)
		discover_close(t->disc);
	proc_connector_close(t->conn);
	opencheck_free(t->pending);
	procmodel_free(t->model);
	free(t);
}

int tracker_fd(const struct tracker *t)
{
	if (t->disc)
		return discover_fd(t->disc);
	return t->conn ? proc_connector_fd(t->conn) : -1;
}

int tracker_timeout_ms(const struct tracker *t)
{
	int64_t next = t->next_socket_ms;

	if (t->disc && t->next_glob_ms < next)
		next = t->next_glob_ms;
	if (t->disc && !t->closes && t->next_cards_ms < next)
		next = t->next_cards_ms;
	if (opencheck_next_ms(t->pending) < next)
		next = opencheck_next_ms(t->pending);
	if (procmodel_soon_next_ms(t->model) < next)
		next = procmodel_soon_next_ms(t->model);
	if (t->polling && t->next_poll_ms < next)
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

/*
 * Nodes made since the last look are told to the kernel filter before the
 * scan reads fds. A failed glob leaves the nodes registered before, which
 * the scan's own glob then reports.
 */
static int rescan(struct tracker *t)
{
	int err;

	if (t->disc) {
		if (procmodel_refresh_card_devs(t->model) < 0) { /* see above */
		}
		register_cards(t);
	}
	err = procmodel_scan(t->model);
	if (!err)
		t->rescans++;
	return err;
}

/*
 * With BPF nothing else would look for card nodes made after the start; a
 * new one means processes may already hold it unseen (their open did not
 * pass the filter), so a scan follows.
 */
static void check_card_nodes(struct tracker *t, int64_t now)
{
	int changed;

	if (!t->disc || now < t->next_glob_ms)
		return;
	t->next_glob_ms = now + TRACKER_CARD_GLOB_MS;
	changed = procmodel_refresh_card_devs(t->model);
	t->glob_err = changed < 0 ? changed : changed ? rescan(t) : 0;
}

/*
 * Without close events (the cgroup device hook), closes are found by
 * re-reading the card holders' fds; like polling, the period stretches to
 * ten times what a pass takes.
 */
static void check_card_holders(struct tracker *t, int64_t now)
{
	int64_t work;
	bool done;

	if (!t->disc || t->closes || now < t->next_cards_ms)
		return;
	/* A slice of the pass at a time, as the sockets' (procmodel.h). */
	done = procmodel_refresh_cards_until(t->model, &t->cards_cursor, now + TRACKER_SOCKET_SLICE_MS);
	t->cards_work_ms += clock_ms() - now;
	if (!done) {
		t->next_cards_ms = clock_ms() + TRACKER_SOCKET_GAP_MS;
		return;
	}
	work = t->cards_work_ms;
	t->cards_work_ms = 0;
	t->cards_period_ms = work * 10 > TRACKER_CARD_CHECK_MS ? (int)(work * 10) : TRACKER_CARD_CHECK_MS;
	t->next_cards_ms = clock_ms() + t->cards_period_ms;
}

/*
 * Events lost (ring buffer or connector socket full): only a full scan
 * can tell what they were. The count is taken as answered only once a
 * scan worked; a failed one is tried again a poll period later (a scan
 * can fail late, after reading every process). 1 when it rescanned, 0
 * when nothing was owed, or a negative errno (also while a retry waits).
 */
static int answer_lost(struct tracker *t, unsigned long long lost)
{
	int err;

	if (lost == t->lost)
		return 0;
	if (clock_ms() < t->retry_ms)
		return t->owed_err;
	err = rescan(t);
	if (err) {
		t->retry_ms = clock_ms() + TRACKER_POLL_MS;
		t->owed_err = err;
		return err;
	}
	t->lost = lost;
	return 1;
}

/* One step of a tick: the first failure is kept in `why`. */
static void step_failed(int err, const char *what, int *first, char *why, size_t whylen)
{
	if (!err || *first)
		return;
	*first = err;
	snprintf(why, whylen, "%s: %s", what, strerror(-err));
}

/* Kernel events (BPF, or the process connector) and the rescans they owe. */
static void take_events(struct tracker *t, int *err, char *why, size_t whylen)
{
	int rc;

	if (t->disc) {
		rc = discover_consume_events(t->disc, apply_bpf_event, t);
		step_failed(rc < 0 ? rc : 0, "cannot read kernel events", err, why, whylen);
		rc = answer_lost(t, discover_lost_events(t->disc));
		step_failed(rc < 0 ? rc : 0, "cannot rescan /proc after lost events", err, why, whylen);
		opencheck_run(t->pending, t->model, clock_ms());
		if (t->owe_scan && clock_ms() >= t->retry_ms) {
			rc = rescan(t);
			t->owe_scan = rc != 0;
			if (rc)
				t->retry_ms = clock_ms() + TRACKER_POLL_MS;
			step_failed(rc, "cannot rescan /proc for unconfirmed card opens", err, why,
				    whylen);
		}
	}
	if (t->conn) {
		rc = proc_connector_consume(t->conn, apply_event, t->model);
		step_failed(rc < 0 ? rc : 0, "cannot read process connector events", err, why, whylen);
		rc = answer_lost(t, proc_connector_lost(t->conn));
		step_failed(rc < 0 ? rc : 0, "cannot rescan /proc after lost events", err, why, whylen);
		if (rc > 0)
			t->next_poll_ms = clock_ms() + TRACKER_POLL_MS;
	}
}

int tracker_tick(struct tracker *t, char *why, size_t whylen)
{
	int64_t now;
	int err = 0;

	socklocate_no_wait(true); /* the loop's: a home read by a helper goes beside it */
	take_events(t, &err, why, whylen);
	now = clock_ms();
	if (t->polling && now >= t->next_poll_ms) {
		t->poll_err = procmodel_scan(t->model);
		t->next_poll_ms = clock_ms() + poll_period(clock_ms() - now);
	}
	/* Periodic steps count as failing until their next run works. */
	step_failed(t->poll_err, "cannot scan /proc", &err, why, whylen);
	check_card_nodes(t, now);
	check_card_holders(t, now);
	procmodel_look_soon(t->model, clock_ms());
	step_failed(t->glob_err, "cannot look for new card nodes", &err, why, whylen);
	if (now >= t->next_socket_ms) {
		/* A slice of the pass at a time: the loop's other sources are served between slices. */
		bool done = procmodel_refresh_sockets_until(t->model, &t->socket_cursor,
							    now + TRACKER_SOCKET_SLICE_MS);

		t->next_socket_ms = done ? now + TRACKER_SOCKET_MS : clock_ms() + TRACKER_SOCKET_GAP_MS;
	}
	socklocate_no_wait(false);
	/* Told once per failure streak; each failing step is retried at its next run. */
	if (!err || t->failing) {
		t->failing = err != 0;
		return 0;
	}
	t->failing = true;
	return err;
}

bool tracker_uses_bpf(const struct tracker *t)
{
	return t->disc != NULL;
}

unsigned long long tracker_lost_events(const struct tracker *t)
{
	if (t->disc)
		return discover_lost_events(t->disc);
	return t->conn ? proc_connector_lost(t->conn) : 0;
}

unsigned tracker_rescans(const struct tracker *t)
{
	return t->rescans;
}

struct procmodel *tracker_model(struct tracker *t)
{
	return t->model;
}
