// SPDX-License-Identifier: MIT
/*
 * The trigger engine (see triggers.h): set-up, targets coming and going,
 * and the console's side (fds, timeouts, ticks). The rules' state machines
 * are in trigger_runs.c, conditions in trigger_cond.c, call counts in
 * trigger_calls.c, the window record in trigger_record.c, script waits in
 * trigger_waiters.c.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared/clock.h"
#include "common/errbuf.h"
#include "kernel/bpfutil.h"
#include "kernel/callcount.h"
#include "model/procmodel.h"
#include "model/procscan.h"
#include "report/report.h"
#include "trigger/trigger_calls.h"
#include "trigger/trigger_inputs.h"
#include "trigger/triggers_impl.h"

#define TICK_ROUNDS 4 /* evaluations per tick while windows keep changing */

/* ---- setting up ------------------------------------------------------------ */

int triggers_add_condition(struct triggers *tg, const struct condition *c)
{
	if (c->kind == COND_SIGNAL)
		trigger_inputs_add_signal(tg->in, c->signo);
	else if (c->kind == COND_FILE && trigger_inputs_add_file(tg->in, c->path)) {
		report_error("dynprof: %s: at most %d different paths", c->text, TRIGGER_MAX_FILES);
		return -1;
	} else if (cond_probes(c->kind))
		return trigger_calls_add(tg->calls, c);
	return 0;
}

#define FIRST_ROOM 16 /* slots of the per-target arrays at first; they double */

/* One per-target array made to hold `room` items (the new ones zeroed). */
static bool grow_array(void **items, size_t size, int old, int room)
{
	char *grown = realloc(*items, (size_t)room * size);

	if (!grown)
		return false;
	memset(grown + (size_t)old * size, 0, (size_t)(room - old) * size);
	*items = grown;
	return true;
}

/*
 * Room in every per-target array for the session's slots (it grows with
 * the targets: no fixed number). False: out of memory (unchanged, printed).
 */
static bool grow_room(struct triggers *tg, int need)
{
	int room = tg->room ? tg->room : FIRST_ROOM;
	void *gone = tg->gone, *serial = tg->serial, *exe = tg->exe, *st = tg->send_start,
	     *sp = tg->send_stop;
	bool ok;

	while (room < need)
		room *= 2;
	if (room == tg->room)
		return true;
	ok = grow_array(&gone, sizeof(*tg->gone), tg->room, room);
	tg->gone = gone;
	ok = ok && grow_array(&serial, sizeof(*tg->serial), tg->room, room);
	tg->serial = serial;
	ok = ok && grow_array(&exe, sizeof(*tg->exe), tg->room, room);
	tg->exe = exe;
	ok = ok && grow_array(&st, sizeof(*tg->send_start), tg->room, room);
	tg->send_start = st;
	ok = ok && grow_array(&sp, sizeof(*tg->send_stop), tg->room, room);
	tg->send_stop = sp;
	ok = ok && !runs_grow(&tg->runs, tg->room, room, tg->nrules) &&
	     !trigger_calls_grow(tg->calls, tg->room, room);
	if (!ok) {
		report_error("dynprof: out of memory following %d targets", need);
		return false;
	}
	tg->room = room;
	return true;
}

static bool alloc_parts(struct triggers *tg)
{
	tg->in = trigger_inputs_new();
	tg->calls = trigger_calls_new(trigger_waiters_rearm);
	tg->runs = runs_new(1, tg->nrules);
	tg->waiters = trigger_waiters_new();
	return tg->in && tg->calls && tg->runs && tg->waiters && grow_room(tg, FIRST_ROOM);
}

struct triggers *triggers_new(struct session *s, const struct window_rule *rules, int nrules)
{
	struct triggers *tg = calloc(1, sizeof(*tg));

	if (!tg) {
		report_error("dynprof: out of memory");
		return NULL;
	}
	tg->s = s;
	tg->start_ms = clock_ms();
	for (int r = 0; r < nrules; r++) {
		if (!trigger_rules_grow(tg)) {
			report_error("dynprof: out of memory");
			triggers_close(tg);
			return NULL;
		}
		tg->rules[r] = rules[r]; /* borrowed strings: rule_free is the caller's */
		tg->origin[r] = (struct phase){ .since_ms = tg->start_ms };
		tg->nrules = tg->nrules_given = r + 1;
	}
	if (!alloc_parts(tg)) {
		report_error("dynprof: out of memory");
		triggers_close(tg);
		return NULL;
	}
	for (int r = 0; r < nrules; r++)
		if (triggers_add_condition(tg, &tg->rules[r].start) ||
		    triggers_add_condition(tg, &tg->rules[r].stop)) {
			triggers_close(tg);
			return NULL;
		}
	session_on_reply(s, trigger_replied, tg); /* the session closes first: tg outlives it */
	return tg;
}

void triggers_close(struct triggers *tg)
{
	if (!tg)
		return;
	trigger_calls_close(tg->calls);
	trigger_inputs_close(tg->in);
	trigger_record_close(tg->record); /* every line was written at quit (the session is gone now) */
	trigger_waiters_close(tg->waiters);
	runs_free(tg->runs);
	free(tg->gone);
	free(tg->serial);
	free(tg->exe);
	free(tg->send_start);
	free(tg->send_stop);
	for (int r = tg->nrules_given; r < tg->nrules; r++)
		rule_free(&tg->rules[r]);
	free(tg->rules);
	free(tg->origin);
	free(tg);
}

bool triggers_have_rules(const struct triggers *tg)
{
	return tg && tg->nrules_given > 0;
}

bool triggers_need_model(const struct triggers *tg)
{
	for (int r = 0; tg && r < tg->nrules; r++)
		if (tg->rules[r].start.kind == COND_OPEN)
			return true;
	return false;
}

/* ---- targets coming and going ----------------------------------------------- */

/* A new target: probes attached, runs armed. -1 when a probe can never count. */
static int take_in(struct triggers *tg, int i)
{
	int rc;

	if (procscan_exe(target_pid(tg, i), tg->exe[i], sizeof(tg->exe[i]))) {
		/* exec: conditions match it; unreadable leaves "" (never matches). */
	}
	rc = trigger_calls_take_in(tg, i);
	trigger_runs_take_in(tg, i);
	return rc;
}

/*
 * A target left: its open windows ended with it (recorded), its rules are
 * done; then its slot is given back to the session for a later join.
 */
static void let_go(struct triggers *tg, int i)
{
	tg->gone[i] = true;
	trigger_runs_let_go(tg, i);
	trigger_calls_forget(tg, i);
	session_target_release(tg->s, i);
}

/*
 * Slot i holds a target not seen before (a new slot, or one reused by a
 * launch-mode join after its last target was let go): its state starts
 * afresh. Returns take_in's answer, 0 for a target already gone.
 */
static int notice(struct triggers *tg, int i)
{
	size_t per = (size_t)(tg->nrules ? tg->nrules : 1);

	tg->serial[i] = session_target_serial(tg->s, i);
	tg->gone[i] = false;
	tg->exe[i][0] = '\0';
	memset(run_of(tg, i, 0), 0, per * sizeof(struct rule_run));
	trigger_calls_reset(tg->calls, i);
	if (!session_target_live(tg->s, i)) {
		let_go(tg, i);
		return 0;
	}
	return take_in(tg, i);
}

/* A slot beyond those seen, or one holding another target now. */
static bool unseen(const struct triggers *tg, int i)
{
	return i >= tg->known || tg->serial[i] != session_target_serial(tg->s, i);
}

/* New targets taken in, those that left let go. False: out of memory (printed). */
static bool follow_targets(struct triggers *tg)
{
	int count = session_target_count(tg->s);

	/*
	 * Room for every slot first, walk or not: a slot taken by a join still
	 * handshaking moves no shape, and the session reads the send arrays
	 * (send_start, send_stop) for each of its slots.
	 */
	if (!grow_room(tg, count))
		return false;
	/* Nothing joined, left or was taken in since the last walk (with 1000 targets, a walk each round). */
	if (!session_shape_moved(tg->s, &tg->followed))
		return true;
	for (int i = 0; i < count; i++) {
		if (session_target_joining(tg->s, i))
			continue; /* seen once it joined (or let go): it counts from its join */
		if (unseen(tg, i)) {
			tg->known = i >= tg->known ? i + 1 : tg->known; /* the parts loop over known */
			if (notice(tg, i)) {
				/* Printed; its rules that cannot run are done. */
			}
		} else if (!tg->gone[i] && !session_target_live(tg->s, i))
			let_go(tg, i);
	}
	return true;
}

int triggers_start(struct triggers *tg, struct procmodel *model)
{
	int rc;

	tg->model = model;
	rc = trigger_inputs_start(tg->in);
	if (rc) {
		report_error("dynprof: cannot watch signals for --window: %s", strerror(-rc));
		return -1;
	}
	if (trigger_calls_start(tg->calls))
		return -1;
	session_hold_slots(tg->s); /* our arrays are keyed by slot: the session reuses only let-go ones */
	if (!grow_room(tg, session_target_count(tg->s)))
		return -1;
	while (tg->known < session_target_count(tg->s)) {
		int i = tg->known++;

		if (notice(tg, i))
			return -1; /* attach mode: refused before any window opens */
	}
	return 0;
}

#define CARDS_RECHECK_MS 200 /* as the --no-bpf poll of card opens */

/* A live target an `open` rule waits on that holds no card yet (as far as the kernel told). */
static bool waits_for_card(const struct triggers *tg, int i)
{
	const struct pm_proc *p;

	if (tg->gone[i] || !tg->model || !triggers_need_model(tg))
		return false;
	p = procmodel_get(tg->model, target_pid(tg, i));
	return p && !p->cards;
}

/*
 * The kernel reports opens of the card nodes the host's patterns name; a
 * node that exists only in a target's container is a card by its name,
 * seen in /proc only: look there, for the targets an `open` waits on.
 */
static void recheck_cards(struct triggers *tg)
{
	int64_t now = clock_ms();

	if (now < tg->cards_recheck_at)
		return;
	tg->cards_recheck_at = now + CARDS_RECHECK_MS;
	for (int i = 0; i < tg->known; i++)
		if (waits_for_card(tg, i))
			procmodel_recheck_cards(tg->model, target_pid(tg, i));
}

static bool any_waits_for_card(const struct triggers *tg)
{
	if (!tg->model || !triggers_need_model(tg))
		return false; /* asked once, not for each of 1000 targets a round */
	for (int i = 0; i < tg->known; i++)
		if (waits_for_card(tg, i))
			return true;
	return false;
}

void triggers_tick(struct triggers *tg)
{
	trigger_record_flush(tg, false);
	recheck_cards(tg);
	trigger_inputs_check_files(tg->in);
	trigger_calls_refresh(tg);
	follow_targets(tg);
	/* A window that opened or closed may make another condition true at once. */
	for (int round = 0; round < TICK_ROUNDS && trigger_evaluate(tg); round++)
		follow_targets(tg);
}

/* ---- the console's side ---------------------------------------------------- */

int triggers_pollfds(const struct triggers *tg, struct pollfd *pfds, int max)
{
	int n = 0;

	if (trigger_inputs_fd(tg->in) >= 0 && n < max)
		pfds[n++] = (struct pollfd){ .fd = trigger_inputs_fd(tg->in), .events = POLLIN };
	return n + trigger_calls_pollfds(tg->calls, pfds + n, max - n);
}

void triggers_event(struct triggers *tg, const struct pollfd *pfd)
{
	if (pfd->fd == trigger_inputs_fd(tg->in))
		trigger_inputs_read_signals(tg->in);
	else
		trigger_calls_event(tg, pfd);
}

int triggers_timeout_ms(const struct triggers *tg)
{
	int64_t due = trigger_inputs_timeout_ms(tg->in);

	if (trigger_calls_pending(tg->calls))
		due = clock_sooner(due, CALLCOUNT_REFRESH_MS);
	due = clock_sooner(due, trigger_runs_due_ms(tg));
	due = clock_sooner(due, trigger_waiters_due_ms(tg));
	if (any_waits_for_card(tg))
		due = clock_sooner(due, CARDS_RECHECK_MS);
	return due < 0 ? -1 : due > 60000 ? 60000 : (int)due;
}

void triggers_quitting(struct triggers *tg)
{
	trigger_runs_quit(tg);
	trigger_record_flush(tg, true); /* the session's shutdown gave every window its fate */
}

/*
 * Every live target has done every rule. When no target is left the run
 * ends for that reason instead (status 1), not as a success.
 */
bool triggers_exhausted(const struct triggers *tg)
{
	bool live = false;

	/* Rules added while running keep such a run going, but never end one by themselves. */
	for (int i = 0; tg->nrules_given && i < tg->known; i++)
		for (int r = 0; !tg->gone[i] && r < tg->nrules; r++) {
			live = true;
			if (run_of(tg, i, r)->state != RUN_DONE)
				return false;
		}
	return live;
}

int triggers_check_needs(const struct window_rule *rules, int n,
			 const struct condition *const *waits, int nwaits, char *err, size_t errlen)
{
	const char *what = NULL;
	char why[256];

	for (int i = 0; i < n && !what; i++)
		if (cond_probes(rules[i].start.kind) || cond_probes(rules[i].stop.kind))
			what = rules[i].text;
	for (int i = 0; i < nwaits && !what; i++)
		if (cond_probes(waits[i]->kind))
			what = waits[i]->text;
	if (!what || bpfutil_usable(why, sizeof(why)) == 0)
		return 0;
	return errbuf_set(err, errlen,
			  "'%s': call:, slow:, gap: and stall: conditions need BPF uprobes: %s",
			  what, why);
}
