/* SPDX-License-Identifier: MIT */
/*
 * The `status` command's answer: a header (mode, uptime, targets, windows
 * by fate, kernel events lost, rescans, the process model's size) and one
 * row per live target (pid, nspid, container, user, cards, window state,
 * the rules on it, its last folder); as text lines like --list's table, or
 * one JSON object on one line (docs/STATUS-JSON.md, "schema": 1).
 */
#ifndef DYNPROF_STATUS_H
#define DYNPROF_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "session/session.h"

struct triggers;

#define STATUS_SCHEMA 1

/* What the layers above know (cli/ fills it: the tracker, the discover back end). */
struct status_stats {
	const char *mode;   /* "attach", "launch" or "follow" */
	int64_t started_ms; /* clock_ms() when the run started; 0 unknown */
	bool have_lost;     /* lost_events is known (a kernel back end counts them) */
	unsigned long long lost_events;
	bool have_rescans;  /* a tracker: rescans is known */
	unsigned rescans;   /* rescans of /proc that answered lost events */
	bool have_model;    /* a tracker: model_procs is known */
	size_t model_procs; /* processes in the process model */
};

typedef void (*status_stats_fn)(void *ctx, struct status_stats *out);
typedef void (*status_line_fn)(void *ctx, const char *line);

/*
 * Send the answer, line by line, to `line` (no newlines in them). `tg` and
 * `st` may be NULL (no rules; nothing known: mode "attach", numbers null).
 */
void status_report(const struct session *s, const struct triggers *tg,
		   const struct status_stats *st, bool json, status_line_fn line, void *ctx);

#endif /* DYNPROF_STATUS_H */
