// SPDX-License-Identifier: MIT
/*
 * A fresh connection before a server's limit (session/server_limits.h):
 * QUIT on the old connection, then connect and hand the params again,
 * each step under its deadline. This is still done in the loop (a version
 * beside the loop was tried and left a console START unsent,
 * intermittently), so each step has msprof's 1 s connect-time deadline,
 * not --timeout: no window is open at a reconnect, so a server answers
 * QUIT at once, and one that never does (a tenant's own job) held every
 * other target, the console and --control for --timeout (60 s by
 * default). At most about 2 s now (QUIT, then params): a QUIT not
 * answered in time ends the old connection all the same.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "report/events_out.h"
#include "report/report.h"
#include "session/exchange.h"
#include "session/session_impl.h"
#include "shared/clock.h"

#define RECONNECT_STEP_MS 1000 /* msprof's send/receive timeout while connecting */

/* Each connection uses one of the server's accepts for its lifetime: say when few are left. */
static void count_accepts(const struct target *t)
{
	int made = t->count.connections, left = t->limits.max_accepts - made;

	if (!t->limits.max_accepts)
		return;
	if (left == SERVER_ACCEPTS_WARN)
		report_warning("dynprof: pid %d: %d connections made; its server accepts %d in its lifetime, so at most %d more (fewer if other clients connected)",
			       t->pid, made, t->limits.max_accepts, left);
	else if (left <= 0)
		report_warning("dynprof: pid %d: %d connections made, as many as its server accepts in its lifetime: this one is kept until the server ends it",
			       t->pid, made);
}

/* A failed reconnect: the target is let go (said by what failed). */
static void give_up(struct target *t)
{
	if (t->joined)
		events_target_leave(t->pid, "error");
	target_drop(t);
}

static void say_reconnected(const struct target *t, bool idle)
{
	if (idle)
		report_info("pid %d: reconnected before the server's idle limit (%d s without a window per connection)",
			    t->pid, t->limits.idle_ticks);
	else
		report_info("pid %d: reconnected before the server's request limit (%d requests per connection)",
			    t->pid, t->limits.max_commands);
	count_accepts(t);
}

/* The fresh connection, made here (each step under its deadline); the target let go if it fails. */
static void reconnect_now(struct session *s, struct target *t, bool idle)
{
	struct exchange *x = &t->xchg;
	int shortage = 0, rc;

	session_quit_connection(s, t, RECONNECT_STEP_MS);
	free(t->params);
	t->params = NULL;
	if (t->result_fd >= 0)
		close(t->result_fd);
	t->result_fd = -1;
	rc = session_connect_prepare(s, t, &shortage);
	session_fd_shortage(s, shortage);
	if (rc) {
		give_up(t);
		return;
	}
	session_connect_complete(s, t);
	session_shape_changed(s); /* another fd for the idle set */
	session_handshake_begin(t);
	exchange_run(&x, 1);
	session_finish_handshake(s, t);
	if (t->dropped)
		give_up(t);
	else
		say_reconnected(t, idle);
}

/* The reconnect before a START that waited (session.c may not link to this file). */
static void wire(struct session *s)
{
	s->keep_connection = session_keep_connection;
}

static int keep_connection(struct session *s, int index, bool start_next, int64_t now)
{
	struct target *t = s->targets[index];
	enum server_reconnect why;

	/* Beside the loop (its fd is held), or its helper busy with a copy: looked at again later. */
	if (t->dropped || t->fd < 0 || t->in_flight || t->handshaking || t->departing || t->collect_head)
		return 0;
	why = server_needs_reconnect(&t->limits, &t->count, now, start_next);
	if (why == SERVER_KEEP)
		return 0;
	reconnect_now(s, t, why == SERVER_RECONNECT_IDLE);
	return t->dropped ? -ECONNREFUSED : 0;
}

int session_keep_connection(struct session *s, int index, bool start_next)
{
	wire(s);
	return keep_connection(s, index, start_next, clock_ms());
}

void session_make_room(struct session *s)
{
	for (int i = 0; i < s->ntargets; i++)
		if (session_keep_connection(s, i, true)) {
			/* Printed, and the target dropped. */
		}
}

/* The soonest a live connection needs a reconnect (clock_ms), -1 none: a walk of every target. */
static int64_t due_walk(const struct session *s, int64_t now)
{
	int64_t due = -1;

	for (int i = 0; i < s->ntargets; i++) {
		const struct target *t = s->targets[i];

		if (!t->dropped && t->fd >= 0)
			due = clock_sooner(due, server_reconnect_due_ms(&t->limits, &t->count, now));
	}
	return due < 0 ? -1 : now + due;
}

/*
 * Each round of the loop: with 1000 targets the walk of every connection
 * (and another for the timeout) took 0.1-0.25 ms of every round, which a
 * join waited through at each of its hand-offs. It is made again only when
 * something changed (session_keepalive_changed), the soonest due time came,
 * or KEEPALIVE_FRESH_MS passed (a change not marked costs at most that,
 * within the 0.5 s a reconnect keeps before an idle limit).
 */
#define KEEPALIVE_FRESH_MS 400

static bool fresh(const struct session *s, int64_t now)
{
	return s->keepalive_at && now - s->keepalive_at < KEEPALIVE_FRESH_MS &&
	       (s->keepalive_due < 0 || now < s->keepalive_due);
}

void session_keepalive(struct session *s)
{
	int64_t now = clock_ms();

	if (s->closing || fresh(s, now))
		return;
	wire(s);
	/* One clock read for the walk: a reconnect takes ms, the limits' margin is 0.5 s at least. */
	for (int i = 0; i < s->ntargets; i++)
		if (keep_connection(s, i, false, now)) {
			/* Printed, and the target dropped. */
		}
	now = clock_ms();
	s->keepalive_due = due_walk(s, now);
	s->keepalive_at = now ? now : 1;
}

int64_t session_keepalive_due_ms(const struct session *s)
{
	int64_t now = clock_ms(), due = fresh(s, now) ? s->keepalive_due : due_walk(s, now);

	return due < 0 ? -1 : due > now ? due - now : 0;
}
