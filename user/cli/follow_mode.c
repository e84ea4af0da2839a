// SPDX-License-Identifier: MIT
/* Follow mode (see follow_mode.h). */
#include <stdint.h>
#include <stdlib.h>

#include "cli/follow_mode.h"
#include "cli/joiner.h"
#include "cli/run.h"
#include "common/pidtab.h"
#include "shared/clock.h"
#include "report/report.h"
#include "model/tracker.h"
#include "session/session.h"
#include "model/match.h"

/* The filters' answer for a process, kept until it execs or exits (a user name costs a read). */
#define WANTED ((void *)1)
#define UNWANTED ((void *)2)

struct follow {
	struct joiner j;
	const struct options *o;
	struct pidtab holders; /* card holders: the candidates looked at each round */
	struct pidtab verdict; /* WANTED or UNWANTED by the filters */
	bool ready;            /* the rules' engine runs: joins may begin */
	int64_t walked_ms;     /* the last walk of every holder (each_round) */
};

/*
 * The walk of every holder is for what no change reports (below): at most
 * this often. With 1000 served it took 30-60 us of each round, and a
 * join's every hand-off is a round; changes are considered as they come.
 */
#define WALK_EVERY_MS 10

static bool wanted(struct follow *f, const struct pm_proc *p)
{
	void *v = pidtab_get(&f->verdict, p->pid);

	if (!v) {
		int answer = match_filters_soon(f->o, p);

		if (answer < 0)
			return false; /* being read, or not readable for now: asked again next round */
		v = answer ? WANTED : UNWANTED;
		if (pidtab_put(&f->verdict, p->pid, v)) {
			/* Out of memory: asked again next time, nothing lost. */
		}
	}
	return v == WANTED;
}

static void consider(struct follow *f, const struct pm_proc *p)
{
	if (!f->ready || !p->cards)
		return;
	if (p->socket_state == PM_SOCKET_NONE) {
		if (wanted(f, p))
			joiner_check_socketless(&f->j, p);
		return;
	}
	if (p->socket_state == PM_SOCKET_LISTENING && !session_has_target(f->j.s, p->pid) && wanted(f, p))
		joiner_try(&f->j, p);
}

static void on_change(void *ctx, enum pm_change what, const struct pm_proc *p)
{
	struct follow *f = ctx;

	joiner_changed(&f->j, what, p);
	if (what == PM_CHANGE_EXEC || what == PM_CHANGE_EXIT)
		pidtab_del(&f->verdict, p->pid); /* another program: the filters ask again */
	if (what == PM_CHANGE_EXIT || !p->cards) {
		pidtab_del(&f->holders, p->pid);
		return;
	}
	if (!pidtab_get(&f->holders, p->pid) && !pidtab_get(&f->j.served, p->pid))
		joiner_remember(&f->holders, p->pid, "it may not join");
	consider(f, p);
}

/*
 * Every round, the card holders only (not the whole host): a re-exec'd
 * target's new socket can listen in the same state as the old one, which
 * no change reports, and a socketless one is explained after a while.
 */
static void each_round(void *ctx)
{
	struct follow *f = ctx;
	const struct procmodel *m = tracker_model(f->j.t);
	int64_t now = clock_ms();

	if (f->walked_ms && now - f->walked_ms < WALK_EVERY_MS)
		return;
	f->walked_ms = now;
	joiner_round(&f->j);
	for (size_t i = 0; i < pidtab_cap(&f->holders); i++) {
		int pid = pidtab_slot(&f->holders, i)->pid;
		const struct pm_proc *p = pid > 0 ? procmodel_get(m, pid) : NULL;

		if (p)
			consider(f, p);
	}
}

/* The session every card user of the host may join. */
static int open_session(void *ctx, struct run *r)
{
	struct follow *f = ctx;

	session_open_follow(&r->s, r->o, r->output);
	joiner_init(&f->j, r->s, r->o, false);
	pidtab_init(&f->holders);
	f->j.walked = &f->holders;
	pidtab_init(&f->verdict);
	return 0;
}

static int open_tracker(void *ctx, struct run *r)
{
	struct follow *f = ctx;

	r->tracker = f->j.t = joiner_tracker_open(r->o, r->s, on_change, f);
	return r->tracker ? 0 : -1;
}

/* Joins after the engine started: a present target is a joiner like any later one. */
static int first_joins(void *ctx, struct run *r)
{
	struct follow *f = ctx;
	const struct options *o = r->o;

	f->ready = true;
	each_round(f);
	report_info("following card users on the host and in its containers%s: %d target%s now; the run ends on quit, SIGINT or SIGTERM",
		    o->ncontainers || o->nusers || o->nexes ?
			    " (those --container, --user and --exe take)" :
			    "",
		    session_live(r->s), session_live(r->s) == 1 ? "" : "s");
	return 0;
}

static void close_follow(void *ctx, struct run *r)
{
	struct follow *f = ctx;

	(void)r;
	pidtab_free(&f->holders);
	pidtab_free(&f->verdict);
	joiner_free(&f->j);
}

int follow_mode_run(const struct options *o)
{
	static const struct run_mode follow = {
		.console = { .name = "follow", .endless = true, .on_tick = each_round },
		.open = open_session,
		.watch = open_tracker,
		.begin = first_joins,
		.close = close_follow,
	};
	struct follow f = { .o = o };

	return run_mode_run(o, &follow, &f);
}
