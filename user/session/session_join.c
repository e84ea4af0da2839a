// SPDX-License-Identifier: MIT
/*
 * A target joining a running session (launch and follow mode), without the
 * loop waiting on it (issue 24): everything that may wait on the target, its
 * helper made with its user's uid (which that user may stop), its passwd and
 * result folder read and made through that helper, its socket's connect,
 * runs on a thread of its own (common/offloop.h); its handshake is then an
 * exchange the loop steps with the others. A joining target is in the
 * table only from its handshake on, and counts as live only once joined.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/offloop.h"
#include "hostdata/hostdata.h"
#include "report/events_out.h"
#include "report/report.h"
#include "session/exchange.h"
#include "session/session_impl.h"
#include "session/target_origin.h"
#include "session/watchdog.h"
#include "shared/cards.h"
#include "shared/clock.h"
#include "sock/socklocate.h"

struct join_job {
	struct offloop_job job;
	struct session *s;
	struct target t; /* prepared on the job's thread, then moved into a slot */
	char command[256];
	uint64_t cards;
	int rc, shortage;
	bool gone;       /* its process exited while the job ran */
	bool socketless; /* taken with the stand-in if it still serves no socket */
	bool located;    /* t.sock is the model's look of just now: not located again */
	bool has_origin; /* origin: the model's read of it, taken as target_origin_read's */
	struct pm_proc origin;
	struct report_capture lines;
	struct join_job *next; /* s->joining */
};

static void told(struct session *s, int pid, int rc)
{
	if (s->join_told)
		s->join_told(s->join_ctx, pid, rc);
}

/* On the job's thread: nothing of the session but what session_connect_prepare reads. */
static void join_work(struct offloop_job *job)
{
	struct join_job *j = (struct join_job *)job;
	struct target *t = &j->t;

	report_capture_begin(&j->lines);
	j->rc = j->located ? 0 : socklocate_find(t->pid, &t->sock);
	t->nspid = t->sock.nspid;
	if (j->rc == -EMFILE || j->rc == -ENFILE)
		j->shortage = j->rc;
	if (j->rc == -ENOENT && j->socketless && session_stand_in(j->s, t) == 0)
		j->rc = 0;
	if (j->rc)
		report_target_error(t->pid, "dynprof: pid %d (%s) cannot join: %s", t->pid,
				    j->command, t->sock.why);
	else
		j->rc = session_connect_prepare(j->s, t, &j->shortage);
	/* Taken for this connect only: a reconnect later asks whose the file is again. */
	t->sock.file_dev = t->sock.file_ino = 0;
	report_capture_end();
}

static void unlink_job(struct session *s, struct join_job *j)
{
	for (struct join_job **p = &s->joining; *p; p = &(*p)->next)
		if (*p == j) {
			*p = j->next;
			return;
		}
}

static void handshake_ended(struct session *s, int index);

/* ---- the handshaking slots (session_impl.h: hs) ---- */

static void hs_add(struct session *s, int index)
{
	void *list = s->hs;

	if (s->hs_lost || grow_for_one(&list, &s->hscap, s->nhs, sizeof(*s->hs), 16)) {
		s->hs_lost = true; /* walked in full until no handshake is left */
		return;
	}
	s->hs = list;
	s->hs[s->nhs++] = index;
}

static void hs_remove(struct session *s, int index)
{
	for (size_t k = 0; k < s->nhs; k++)
		if (s->hs[k] == index) {
			s->hs[k] = s->hs[--s->nhs]; /* order does not matter; a walk goes from the end */
			break;
		}
}

/* No handshake under way: the list starts afresh (and a lost one is whole again). */
static void hs_reset(struct session *s)
{
	s->nhs = 0;
	s->hs_lost = false;
}

/* How many slots a pass over the handshakes looks at, and the k-th (from the end: one may leave meanwhile). */
static size_t hs_count(const struct session *s)
{
	return !s->handshakes ? 0 : s->hs_lost ? (size_t)s->ntargets : s->nhs;
}

static int hs_at(const struct session *s, size_t k)
{
	return s->hs_lost ? (int)k : s->hs[k];
}

/* Its handshake is over, however it ended. */
static void handshake_off(struct session *s, struct target *t, int index)
{
	t->handshaking = false;
	session_shape_changed(s);
	s->handshakes--;
	hs_remove(s, index);
}

/* The prepared target into a slot of the table (its serial the slot's), its handshake sent. */
static void begin_handshake(struct session *s, struct join_job *j)
{
	struct target *t = session_new_slot(s, true);
	unsigned serial;

	if (!t) {
		report_target_error(j->t.pid,
				    "dynprof: pid %d (%s) cannot join: out of memory (the session holds %d targets)",
				    j->t.pid, j->command, session_live(s));
		target_free(&j->t);
		told(s, j->t.pid, -ENOMEM);
		return;
	}
	serial = t->serial;
	*t = j->t;
	t->serial = serial;
	session_index_target(s, t);
	t->cards = j->cards;
	snprintf(t->command, sizeof(t->command), "%s", j->command);
	if (j->has_origin) { /* taken now, said when its handshake ends */
		target_origin_take(t, &j->origin);
		t->origin_taken = true;
	}
	session_batch_begin(s);
	session_connect_complete(s, t);
	session_batch_end(s);
	session_handshake_begin(t);
	/*
	 * No change the passes over every target look for (session_shape): a
	 * handshaking target is neither live nor idle, and its handshake's end
	 * is one; a pass made here was a walk of every target between the
	 * join's params and its reply.
	 */
	t->handshaking = true;
	if (!s->handshakes)
		hs_reset(s);
	s->handshakes++;
	hs_add(s, s->last_slot);
	/* Answered as it began (the reply was there as the params went out): joined now, not a round later. */
	if (!exchange_pending(&t->xchg))
		handshake_ended(s, s->last_slot);
}

/* On the loop's thread: the job's lines said, its target taken in or let go. */
static void join_done(struct offloop_job *job)
{
	struct join_job *j = (struct join_job *)job;
	struct session *s = j->s;

	unlink_job(s, j);
	report_capture_flush(&j->lines);
	session_fd_shortage(s, j->shortage);
	if (!j->rc && s->closing) {
		report_info("pid %d (%s) not joined: dynprof is quitting", j->t.pid, j->command);
		j->rc = -ECANCELED;
	} else if (!j->rc && j->gone) {
		j->rc = -ESRCH; /* it left before it joined: nothing to say */
	}
	if (j->rc) {
		target_free(&j->t);
		told(s, j->t.pid, j->rc);
	} else {
		begin_handshake(s, j);
	}
	free(j);
}

static int join(struct session *s, int pid, const char *command, uint64_t cards, bool socketless,
		const struct sock_location *found, const struct pm_proc *origin)
{
	struct join_job *j;
	int rc;

	if (s->closing) {
		report_info("pid %d (%s) not joined: dynprof is quitting", pid, command);
		return -ECANCELED;
	}
	j = calloc(1, sizeof(*j));
	if (!j) {
		report_target_error(pid, "dynprof: pid %d (%s) cannot join: out of memory (the session holds %d targets)",
				    pid, command, session_live(s));
		return -ENOMEM;
	}
	*j = (struct join_job){ .job = { .work = join_work, .done = join_done },
				.s = s,
				.t = { .pid = pid, .fd = -1, .ep_fd = -1, .result_fd = -1 },
				.cards = cards,
				.socketless = socketless };
	if (found && found->pid == pid) {
		j->t.sock = *found;
		j->located = true;
	}
	if (origin && origin->pid == pid && origin->complete) {
		j->origin = *origin;
		j->has_origin = true;
	}
	snprintf(j->command, sizeof(j->command), "%s", command);
	rc = offloop_start(&s->jobs, &j->job);
	if (rc) {
		report_target_error(pid, "dynprof: pid %d (%s) cannot join: no thread for it: %s",
				    pid, command, strerror(-rc));
		free(j);
		return rc;
	}
	j->next = s->joining;
	s->joining = j;
	return 0;
}

int session_join(struct session *s, int pid, const char *command, uint64_t cards)
{
	return join(s, pid, command, cards, false, NULL, NULL);
}

int session_join_found(struct session *s, int pid, const char *command, uint64_t cards,
		       const struct sock_location *found, const struct pm_proc *origin)
{
	return join(s, pid, command, cards, false, found, origin);
}

int session_join_socketless(struct session *s, int pid, const char *command, uint64_t cards)
{
	return join(s, pid, command, cards, true, NULL, NULL);
}

bool session_has_target(const struct session *s, int pid)
{
	const struct target *t;

	for (const struct join_job *j = s->joining; j; j = j->next)
		if (j->t.pid == pid && !j->gone)
			return true;
	if (!s->index_incomplete) {
		t = pidtab_get(&s->bypid, pid);
		return t && t->pid == pid && !t->dropped;
	}
	for (int i = 0; i < s->ntargets; i++)
		if (!s->targets[i]->dropped && s->targets[i]->pid == pid)
			return true;
	return false;
}

/* Its handshake ended: joined (and started when the window is open), or let go with why. */
static void handshake_ended(struct session *s, int index)
{
	struct target *t = s->targets[index];
	char list[192];

	handshake_off(s, t, index);
	session_keepalive_changed(s);
	session_finish_handshake(s, t);
	if (t->dropped) {
		t->released = true; /* never announced: nobody above knows it */
		/* Why it failed (a timeout may be tried again: cli/joiner.c); a refusal otherwise. */
		told(s, t->pid, t->xchg.result < 0 ? t->xchg.result : -ECONNREFUSED);
		return;
	}
	s->joined++;
	cards_mask_text(t->cards, list, sizeof(list));
	report_info("target joined: pid %d (%s), cards %s", t->pid, t->command, list);
	/* The model's read of it a moment ago, else /proc now (on the loop: it held the join's event). */
	if (!t->origin_taken)
		target_origin_read(t);
	t->joined = true;
	events_target_join(t->pid, t->nspid, t->container, t->command, t->cards, true, t->standin);
	hostdata_target_join(t->pid, s->opts); /* before its first START: the window's span is kept */
	told(s, t->pid, 0);
	if (s->window_open)
		session_start_joined(s, index);
}

int session_join_pollfds(const struct session *s, struct pollfd *pfds, int max)
{
	int n = 0;

	for (size_t k = hs_count(s); k-- > 0 && n < max;) {
		const struct target *t = s->targets[hs_at(s, k)];

		if (t->handshaking)
			n += exchange_pollfd(&t->xchg, &pfds[n]);
	}
	return n;
}

void session_join_step(struct session *s)
{
	for (size_t k = hs_count(s); k-- > 0;) {
		int i = hs_at(s, k);
		struct target *t = s->targets[i];

		if (!t->handshaking)
			continue;
		if (t->dropped) { /* let go meanwhile (target_drop abandoned its exchange) */
			handshake_off(s, t, i);
			t->released = true;
			told(s, t->pid, -ECONNREFUSED);
			continue;
		}
		exchange_step(&t->xchg); /* non-blocking; its deadline looked at too */
		if (!exchange_pending(&t->xchg))
			handshake_ended(s, i);
	}
}

int64_t session_join_timeout_ms(const struct session *s)
{
	int64_t nearest = -1;

	for (size_t k = hs_count(s); k-- > 0;) {
		const struct target *t = s->targets[hs_at(s, k)];
		const struct exchange *x = &t->xchg;

		if (!t->handshaking)
			continue;
		/*
		 * Ended as it began (the reply came while the params went out): no
		 * fd wakes the loop for it, and the loop slept until something else
		 * did (a join waited for the socket pass, up to 100 ms).
		 */
		if (!exchange_pending(x))
			return 0;
		if (nearest < 0 || x->deadline < nearest)
			nearest = x->deadline;
	}
	return nearest < 0 ? -1 : clock_ms_left(nearest);
}

int session_join_room(const struct session *s)
{
	return s->handshakes;
}

void session_on_join(struct session *s, void (*fn)(void *ctx, int pid, int rc), void *ctx)
{
	s->join_told = fn;
	s->join_ctx = ctx;
}

static void session_join_finish(struct session *s)
{
	struct exchange **xs = calloc((size_t)s->handshakes + 1, sizeof(*xs));
	int n = 0;

	for (size_t k = hs_count(s); k-- > 0 && xs;) {
		struct target *t = s->targets[hs_at(s, k)];

		if (t->handshaking)
			xs[n++] = &t->xchg;
	}
	if (xs)
		exchange_run(xs, n); /* else each is let go as it stands: no room to wait */
	free(xs);
	for (size_t k = hs_count(s); k-- > 0;) {
		int i = hs_at(s, k);

		if (s->targets[i]->handshaking)
			handshake_ended(s, i);
	}
}

static bool session_join_exited(struct session *s, int pid)
{
	bool found = false;

	for (struct join_job *j = s->joining; j; j = j->next)
		if (j->t.pid == pid)
			found = j->gone = true;
	for (size_t k = hs_count(s); k-- > 0;) {
		int i = hs_at(s, k);
		struct target *t = s->targets[i];

		if (!t->handshaking || t->pid != pid)
			continue;
		exchange_abandon(&t->xchg, -ESRCH);
		handshake_off(s, t, i);
		target_drop(t);
		t->released = true;
		told(s, pid, -ESRCH);
		found = true;
	}
	return found;
}

void session_open_launch(struct session **sp, const struct options *o, const char *output)
{
	struct session *s = calloc(1, sizeof(*s));

	*sp = NULL;
	session_params_forget();
	if (!s)
		return; /* launch_mode says it */
	s->opts = o;
	s->join_exited = session_join_exited;
	s->join_finish = session_join_finish;
	offloop_init(&s->jobs);
	s->launch = true;
	snprintf(s->output, sizeof(s->output), "%s", output);
	s->targets = calloc(SESSION_FIRST_SLOTS, sizeof(*s->targets));
	if (!s->targets) {
		free(s);
		return;
	}
	s->slots = SESSION_FIRST_SLOTS;
	hostdata_prepare(o);
	watchdog_start(o->timeout_ms); /* before any target connects */
	*sp = s;
}

void session_open_follow(struct session **sp, const struct options *o, const char *output)
{
	session_open_launch(sp, o, output);
	if (*sp)
		(*sp)->follow = true;
}
