/* SPDX-License-Identifier: MIT */
/*
 * --events=json[:PATH]: one JSON object per line for every target joining
 * or leaving, window opening or closing, and error, so other programs can
 * follow a run (schema in docs/EVENTS-JSON.md). The console keeps its own
 * lines; the callers pass text they already formatted for it, so the two
 * never disagree. Every function is a no-op until events_open() succeeded.
 *
 * Errors: events_open follows convention 3 of docs/ERRORS.md (printed).
 */
#ifndef DYNPROF_EVENTS_OUT_H
#define DYNPROF_EVENTS_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/compiler.h"

/*
 * Parse the option value ("json" or "json:PATH") and open the sink.
 * Returns 0, or -EINVAL with the one error line in err (nothing printed:
 * report.c prints and calls events_error, so this file must not call it).
 */
int events_open(const char *spec, char *err, size_t errlen) DP_MUST_CHECK;
void events_close(void);
/* Events are being built: the sink is open or a listener is set. */
bool events_enabled(void);

/*
 * A listener gets every event's line (no newline) as it is written to the
 * sink, also when --events was not given: --control's `events` streams
 * (control/stream.h). One at a time; NULL removes it. While there is
 * neither sink nor listener no event is built at all. The listener may
 * call events_set_listener (to remove itself) but must not emit events.
 */
typedef void (*events_listener_fn)(void *ctx, const char *line, size_t len);
void events_set_listener(events_listener_fn fn, void *ctx);

/*
 * container: the name its engine gives it (else its short id), NULL or ""
 * for none (null); command may be NULL (unknown); cards_known false: no
 * "cards" member.
 */
void events_target_join(int pid, int nspid, const char *container, const char *command,
			uint64_t cards, bool cards_known, bool host_only);
/* reason: "exit", "disconnect", "error" or "quit". */
void events_target_leave(int pid, const char *reason);
void events_window_open(int pid);

/*
 * A window closed: begin, add each PROF_ folder as it is reported, its
 * fate, end (which writes the event). begin returns NULL when events are off; add
 * and end accept NULL.
 */
struct events_close;
struct events_close *events_window_close_begin(int pid);
void events_window_close_add(struct events_close *c, const char *prof);
/* Its fate ("saved", "incomplete", "lost") and, unless saved, why (NULL: none). */
void events_window_close_fate(struct events_close *c, const char *fate, const char *reason);
void events_window_close_end(struct events_close *c);
/* Its host data summary as "host" (docs/EVENTS-JSON.md): taken, freed with the event (also when c is NULL). */
struct cJSON;
void events_window_close_host(struct events_close *c, struct cJSON *host);

/* A rule's condition fired for a target: edge "start" or "stop"; count: the call count (call: only). */
void events_trigger(int pid, int rule, const char *edge, const char *condition, bool has_count,
		    uint64_t count);

/* The same for slow:, gap:, stall: conditions: what was measured and the typical value then (ns). */
void events_trigger_measured(int pid, int rule, const char *edge, const char *condition,
			     uint64_t value_ns, uint64_t typical_ns);

/* pid <= 0: not about one target. */
void events_error(int pid, const char *message);

#endif /* DYNPROF_EVENTS_OUT_H */
