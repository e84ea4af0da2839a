// SPDX-License-Identifier: MIT
/* Card holders joining as they come (see joiner.h). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/joiner.h"
#include "config/hostsys.h"
#include "report/report.h"
#include "model/procscan.h"
#include "model/tracker.h"
#include "shared/clock.h"
#include "sock/sockstate.h"
#include "sock/socklocate.h"
#include "session/target_select.h"

#define NO_SOCKET_NOTICE_MS 3000 /* CANN opens its socket within a second of its card */
#define SOCKET_FRESH_MS 2        /* a model's socket read this recent is not read again to join */

static void remember_image(struct joiner *j, int pid);

/*
 * A join that failed for now (its server slow to hand the params back
 * under load, a connection reset, no fd or memory at that moment) is tried
 * again after 1, 2, 4, 8 and 16 s while its socket listens: a job is not
 * missed for good because the host was busy when it came. Any other
 * failure (a refusal, a socket not its own) is not tried again until the
 * process changes. The table's value: FOR_GOOD, or the next try's time
 * (clock_ms) and the tries made so far.
 */
#define JOIN_RETRIES 5
#define FOR_GOOD ((void *)1)

static bool for_now(int rc)
{
	switch (-rc) {
	case ETIMEDOUT:
	case ECONNRESET:
	case EPIPE:
	case EAGAIN:
	case EMFILE:
	case ENFILE:
	case ENOMEM:
		return true;
	default:
		return false;
	}
}

static void *retry_at(int64_t when_ms, unsigned tries)
{
	return (void *)(uintptr_t)(((uint64_t)when_ms << 4) | tries);
}

static unsigned tries_of(const void *v)
{
	return v && v != FOR_GOOD ? (unsigned)((uintptr_t)v & 15) : 0;
}

/* A failed join's pid: when it may be tried again, if ever. */
static void remember_failure(struct joiner *j, int pid, int rc)
{
	unsigned tries = tries_of(pidtab_get(&j->failed, pid)) + 1;
	void *v = FOR_GOOD;

	if (for_now(rc) && tries <= JOIN_RETRIES) {
		int64_t wait_ms = 1000LL << (tries - 1);

		v = retry_at(clock_ms() + wait_ms, tries);
		report_info("pid %d: its join is tried again in %lld s (%u of %d)", pid,
			    (long long)(wait_ms / 1000), tries, JOIN_RETRIES);
	}
	if (pidtab_put(&j->failed, pid, v))
		report_error("dynprof: following pid %d: %s (its join is tried again)", pid,
			     strerror(ENOMEM));
}

/* Not failed, or failed for now and its time has come. */
static bool may_try(const struct joiner *j, int pid)
{
	const void *v = pidtab_get(&j->failed, pid);

	return !v || (v != FOR_GOOD && clock_ms() >= (int64_t)((uintptr_t)v >> 4));
}

/* A join's outcome (session_join runs it beside the loop); one that ended because its process left is not remembered. */
static void join_told(void *ctx, int pid, int rc)
{
	struct joiner *j = ctx;

	if (rc == 0) {
		pidtab_del(&j->failed, pid);
		remember_image(j, pid);
		/*
		 * The session watches its connection; out of memory: the pass goes
		 * on looking. Not with --msprof-key: another rank may take the one
		 * path from it, and the pass is what tells.
		 */
		if (j->t && !j->msprof_key && !pidtab_put(&j->served, pid, j)) {
			procmodel_set_served(tracker_model(j->t), pid, true);
			if (j->walked)
				pidtab_del(j->walked, pid);
		}
	} else if (rc != -ESRCH && rc != -ECANCELED)
		remember_failure(j, pid, rc);
}

void joiner_init(struct joiner *j, struct session *s, const struct options *o, bool msprof_key)
{
	*j = (struct joiner){ .s = s,
			      .msprof_key = msprof_key,
			      .standin = hostsys_own(options_switch(o, "host-sys")) != 0 };
	pidtab_init(&j->failed);
	pidtab_init(&j->nosock);
	pidtab_init(&j->image);
	pidtab_init(&j->served);
	if (s)
		session_on_join(s, join_told, j);
}

struct tracker *joiner_tracker_open(const struct options *o, const struct session *s,
				    pm_listener fn, void *ctx)
{
	struct card_patterns patterns;
	const char *note = NULL;
	struct tracker *t;

	options_card_patterns(o, &patterns);
	t = tracker_open(&patterns, o->no_bpf ? TRACKER_NO_BPF : TRACKER_BPF, fn, ctx, true, &note);
	if (!t || !s) {
		report_error("dynprof: cannot follow processes: %s", strerror(t ? ENOMEM : errno));
		tracker_close(t);
		return NULL;
	}
	if (note)
		report_info("%s", note);
	return t;
}

void joiner_free(struct joiner *j)
{
	if (j->s)
		session_on_join(j->s, NULL, NULL); /* joins ending later have no one to tell */
	pidtab_free(&j->failed);
	pidtab_free(&j->nosock);
	pidtab_free(&j->image);
	pidtab_free(&j->served);
}

#define LET_GO_BATCH 64 /* let go per round; more wait for the next */
/*
 * A let-go served pid is only the model's to look at again (a join asks
 * the session, not this table): the walk of served need not be quick, and
 * goes LET_GO_LOOK slots a round.
 */
#define LET_GO_LOOK 128

/* A served pid the session let go: the model's socket pass and the mode's walk take it again. */
static void unserve(struct joiner *j, int pid)
{
	const struct pm_proc *p = procmodel_get(tracker_model(j->t), pid);

	procmodel_set_served(tracker_model(j->t), pid, false);
	pidtab_del(&j->served, pid);
	if (j->walked && p && p->cards)
		joiner_remember(j->walked, pid, "it may not join again");
}

/*
 * A sweep of the served table only when the session's targets changed
 * since the last one, LET_GO_LOOK slots a round: with 1000 served, a walk
 * of all of them at each change was 8% of the monitor's time, and held
 * the round it ran in.
 */
void joiner_round(struct joiner *j)
{
	int gone[LET_GO_BATCH], n = 0;
	size_t cap = pidtab_cap(&j->served), end;

	if (!j->t)
		return;
	/* A sweep begins, if anything changed since the last. */
	if (!j->let_go_cursor && !session_shape_moved(j->s, &j->let_go_mark))
		return;
	end = j->let_go_cursor + LET_GO_LOOK;
	/* Collected first: the table may not change while it is walked. */
	for (; j->let_go_cursor < cap && j->let_go_cursor < end && n < LET_GO_BATCH; j->let_go_cursor++) {
		int pid = pidtab_slot(&j->served, j->let_go_cursor)->pid;

		if (pid > 0 && !session_has_target(j->s, pid))
			gone[n++] = pid;
	}
	if (j->let_go_cursor >= cap)
		j->let_go_cursor = 0; /* the sweep is over */
	for (int i = 0; i < n; i++)
		unserve(j, gone[i]);
	/* A delete may move a later entry before the cursor: another sweep follows this one. */
	if (n)
		j->let_go_mark.seen = false;
}

void joiner_remember(struct pidtab *tab, int pid, const char *cost)
{
	int err = pidtab_put(tab, pid, tab);

	if (err)
		report_error("dynprof: following pid %d: %s (%s)", pid, strerror(-err), cost);
}

/* FNV-1a of the exe and cmdline; never 0 (the table's "none"). */
static uintptr_t image_hash(const char *exe, const char *cmdline)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (const char *t = exe; *t; t++)
		h = (h ^ (unsigned char)*t) * 0x100000001b3ULL;
	h = (h ^ 0xff) * 0x100000001b3ULL; /* a separator no path holds */
	for (const char *t = cmdline; *t; t++)
		h = (h ^ (unsigned char)*t) * 0x100000001b3ULL;
	return (uintptr_t)h | 1;
}

/*
 * What the new target runs, read from /proc now, not from the model: the
 * model may not have its exec yet (events lost under load, then found by a
 * rescan; an `exec` wrapper such as env or run.sh's `exec python`).
 */
static void remember_image(struct joiner *j, int pid)
{
	struct pm_proc now;

	if (procscan_image(pid, &now) == 0 &&
	    pidtab_put(&j->image, pid, (void *)image_hash(now.exe, now.cmdline))) {
		/* Out of memory: every exec it is told of then ends it, as before. */
	}
}

/*
 * An exec the model learns of after the join ends the target only when
 * the process runs something else than it did at its join: an exec the
 * model had missed (seen late by a rescan) happened before the join, and
 * the server the target joined is the one running. (An exec into the same
 * program and arguments is then not seen here: its connection's end is.)
 */
static bool exec_after_join(struct joiner *j, const struct pm_proc *p)
{
	uintptr_t joined = (uintptr_t)pidtab_get(&j->image, p->pid);

	return !joined || joined != image_hash(p->exe, p->cmdline);
}

/*
 * The model's socket state can be older than the session's news: a target
 * whose connection ended with its exit (a container's stop) is dropped by
 * the session before the model sees that exit, and listens there still.
 * So a join is tried only when the socket listens now (out of memory: as
 * the model says).
 */
static bool listens_now(int pid)
{
	struct sockstate *now = malloc(sizeof(*now)); /* ~12 KiB */
	bool yes;

	socklocate_no_wait(true); /* the loop's */
	yes = !now || (sockstate_read(pid, now) == 0 && now->state == PM_SOCKET_LISTENING);
	socklocate_no_wait(false);

	free(now);
	return yes;
}

/*
 * The model read its socket in this round (a card just opened): asking
 * again would only read the same tables (sock_diag, its fds) a second time,
 * half of a join's own work.
 */
static bool read_just_now(const struct pm_proc *p)
{
	return p->socket_read_ms && clock_ms() - p->socket_read_ms <= SOCKET_FRESH_MS;
}

/* The model's look of just now, as the join would find it again (NULL: it locates it itself). */
static const struct sock_location *found_now(const struct pm_proc *p)
{
	static struct sock_location found; /* ~13 KiB; the loop's only */

	if (!read_just_now(p) || sockstate_last_listener(p->pid, p->start_time, SOCKET_FRESH_MS, &found))
		return NULL;
	return &found;
}

void joiner_try(struct joiner *j, const struct pm_proc *p)
{
	int rc;

	/* A process `quit SEL` let go is not taken again (launch and follow mode alike). */
	if (!p->cards || p->socket_state != PM_SOCKET_LISTENING ||
	    session_has_target(j->s, p->pid) || !may_try(j, p->pid) ||
	    session_dismissed(j->s, p->pid) || (!read_just_now(p) && !listens_now(p->pid)))
		return;
	/* Its outcome reaches join_told; one refused at once is remembered here. */
	rc = session_join_found(j->s, p->pid, p->cmdline[0] ? p->cmdline : p->comm, p->cards,
				found_now(p), p);
	if (rc)
		remember_failure(j, p->pid, rc);
}

void joiner_changed(struct joiner *j, enum pm_change what, const struct pm_proc *p)
{
	pidtab_del(&j->failed, p->pid);
	if (what == PM_CHANGE_EXIT) {
		session_target_exited(j->s, p->pid);
		pidtab_del(&j->nosock, p->pid);
		pidtab_del(&j->image, p->pid);
		pidtab_del(&j->served, p->pid);
	} else if (what == PM_CHANGE_EXEC && session_has_target(j->s, p->pid) && exec_after_join(j, p)) {
		session_target_exited(j->s, p->pid);
		pidtab_del(&j->image, p->pid);
	}
}

/*
 * Still no socket NO_SOCKET_NOTICE_MS after its card: a job started without
 * PROFILING_MODE=dynamic (CANN serves its socket within a second), taken
 * with the stand-in. Tried once: its outcome is said either way.
 */
static void join_socketless(struct joiner *j, const struct pm_proc *p)
{
	if (pidtab_put(&j->nosock, p->pid, (void *)(intptr_t)-1)) /* replacing never allocates */
		pidtab_del(&j->nosock, p->pid);
	if (session_has_target(j->s, p->pid) || !may_try(j, p->pid) || session_dismissed(j->s, p->pid))
		return;
	if (session_join_socketless(j->s, p->pid, p->cmdline[0] ? p->cmdline : p->comm, p->cards))
		remember_failure(j, p->pid, -ENOENT);
}

/* The first sight is kept as the table's value (a time, never NULL); -1 once told. */
void joiner_check_socketless(struct joiner *j, const struct pm_proc *p)
{
	int64_t now = clock_ms(), since = (int64_t)(intptr_t)pidtab_get(&j->nosock, p->pid);
	char why[512];

	if (!since) {
		if (pidtab_put(&j->nosock, p->pid, (void *)(intptr_t)now))
			report_error("dynprof: following pid %d: out of memory (its missing socket is not explained)",
				     p->pid);
		return;
	}
	if (since < 0 || now - since < NO_SOCKET_NOTICE_MS)
		return;
	if (j->standin) {
		join_socketless(j, p);
		return;
	}
	if (!target_select_nosocket_why(tracker_model(j->t), p, why, sizeof(why)) && j->msprof_key)
		/* msprof's way: one path for all, the last process to bind it wins. */
		snprintf(why, sizeof(why),
			 "with --msprof-key every process of the application serves the one socket path dynamic_profiling_socket_%d (DYNAMIC_PROFILING_KEY_PID), and another one took it: this one is unreachable (without --msprof-key each serves its own)",
			 (int)getpid());
	report_info("pid %d (%s) holds a card but serves no socket, so it cannot be a target: %s",
		    p->pid, p->cmdline[0] ? p->cmdline : p->comm, why);
	if (pidtab_put(&j->nosock, p->pid, (void *)(intptr_t)-1)) /* told; replacing never allocates */
		pidtab_del(&j->nosock, p->pid);
}
