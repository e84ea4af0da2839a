// SPDX-License-Identifier: MIT
/*
 * Commands to every target at once, their results in msprof's words, the
 * window state per target, and the shutdown that leaves nothing collecting.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "shared/clock.h"
#include "session/target_results.h"
#include "report/events_out.h"
#include "results/output.h"
#include "proc/procfs.h"
#include "report/report.h"
#include "hostdata/hostdata.h"
#include "results/winaccount.h"
#include "session/session_impl.h"
#include "session/collect.h"
#include "session/target_origin.h"
#include "session/watchdog.h"

void session_hold_slots(struct session *s)
{
	s->slot_holders++;
}

/*
 * Kept until the slot is reused: a holder lets go of a departing target
 * (no longer live, not yet dropped) and never comes back to it.
 */
void session_target_release(struct session *s, int index)
{
	s->targets[index]->released = true;
}

void session_batch_begin(struct session *s)
{
	s->listing_batch++;
}

void session_batch_end(struct session *s)
{
	if (--s->listing_batch <= 0) {
		s->listing_batch = 0;
		output_listing_set_aside(&s->listing); /* the next batch lists again only if it changed */
	}
}

int session_scan_prof_dirs(struct session *s, struct target *t,
			   void (*found)(void *ctx, const char *name), void *ctx)
{
	int rc;

	/* A folder of its own (inside its container): only it looks there, through its helper. */
	if (strcmp(t->result_host, s->output))
		return target_results_scan(t, found, ctx);
	session_batch_begin(s);
	rc = output_listing_valid(&s->listing) ? 0 : output_listing_read(&s->listing, s->output);
	if (rc == 0)
		rc = output_new_prof_dirs_listed(&s->listing, target_prof_names(t), &t->prof_seen,
						 found, ctx);
	session_batch_end(s);
	return rc;
}

/* A window's reason, said once: the first cause found stays (truncated when long). */
static void __attribute__((format(printf, 2, 3)))
set_reason(struct window_account *a, const char *fmt, ...)
{
	va_list ap;

	if (a->reason[0])
		return;
	va_start(ap, fmt);
	vsnprintf(a->reason, sizeof(a->reason), fmt, ap);
	va_end(ap);
}

struct prof_report {
	struct session *s;
	struct target *t;
	struct window_account *a; /* the window being accounted */
	struct events_close *ev;  /* the window-close event being filled */
};

/*
 * A v1 folder carries no pid: once one target claimed it, the other v1
 * targets writing to the same folder must not claim it too.
 */
static void claimed(struct session *s, const struct target *by, const char *name)
{
	for (int i = 0; i < s->ntargets; i++) {
		struct target *t = s->targets[i];

		if (t == by || t->proto != PROTO_V1 || strcmp(t->result_host, by->result_host) ||
		    strcmp(t->result_inside, by->result_inside))
			continue;
		if (output_prof_known_add(&t->prof_seen, name))
			report_target_error(t->pid, "dynprof: out of memory noting %s", name);
	}
}

/* Why a folder could not be brought out, in words. */
static const char *move_error(int rc)
{
	return rc == -EFBIG  ? "it holds more than --window-max-size, left where it is" :
	       rc == -EMLINK ? "it holds more files than --window-max-files, left where it is" :
	       rc == -EINTR  ? "stopped by a signal, left where it is" :
	       rc == -ETIMEDOUT ?
			      "its filesystem did not answer within 5 s (a file that blocks?), left where it is" :
	       rc == -EPROTO ? "its helper sent what is not a folder, left where it is" :
	       rc == -ETIME  ? "its copy did not end within --window-copy-time, left where it is" :
			       strerror(-rc);
}

/* What a copy left out, said once per folder. */
static void say_skipped(const struct target *t, const char *name, const struct fshelper_copied *c)
{
	if (!c->skipped)
		return;
	report_warning("dynprof: pid %d: %s: %u entr%s not copied (symlinks, special files, other mounts or unreadable), the first %s%s%s",
		       t->pid, name, c->skipped, c->skipped == 1 ? "y" : "ies", c->first_skip,
		       c->first_skip_err ? ": " : "",
		       c->first_skip_err ? strerror(-c->first_skip_err) : "");
}

static void move_failed(struct prof_report *r, const char *name, int rc)
{
	const char *why = move_error(rc);

	report_target_error(r->t->pid, "dynprof: pid %d: cannot move %s/%s to %s: %s", r->t->pid,
			    r->t->result_inside, name, r->s->output, why);
	r->a->failed++;
	set_reason(r->a, "cannot move %s/%s to %s: %s", r->t->result_inside, name, r->s->output, why);
}

/* In --output and recorded: finished, or saved incomplete (no end_info). */
static void saved(struct prof_report *r, const char *name)
{
	struct window_account *a = r->a;
	char dst[2 * PATH_MAX];
	int finished = winaccount_prof_finished(r->s->output, name);

	if (finished == 1) {
		a->saved++;
		report_info("pid %d: window saved in %s/%s", r->t->pid, r->s->output, name);
	} else {
		a->incomplete++;
		set_reason(a, "%s has no host/end_info%s%s", name, finished ? ": " : "",
			   finished ? strerror(-finished) : "");
		report_warning("pid %d: window saved incomplete in %s/%s: it has no host/end_info (the window was not stopped: the process ended or was killed first)",
			       r->t->pid, r->s->output, name);
	}
	if (a->nprof < WINACCOUNT_PROF_MAX)
		snprintf(a->prof[a->nprof++], WINACCOUNT_NAME_LEN, "%.*s", WINACCOUNT_NAME_LEN - 1, name);
	snprintf(dst, sizeof(dst), "%s/%s", r->s->output, name);
	events_window_close_add(r->ev, dst);
}

/*
 * Where a folder moved out of t's container goes, as a path relative to
 * --output: "<container>/<name>" (target_origin.h), or <name> when t is on
 * the host or its subfolder cannot be made (said).
 */
static void moved_name(const struct session *s, const struct target *t, const char *name, char *rel,
		       size_t len)
{
	char sub[sizeof(t->container)];
	int rc = target_output_subdir(t, s->output, sub, sizeof(sub));

	if (rc)
		report_warning("dynprof: pid %d: cannot make the folder %s/%s for its container's results: %s; %s goes to %s",
			       t->pid, s->output, t->container, strerror(-rc), name, s->output);
	snprintf(rel, len, "%s%s%s", sub, sub[0] ? "/" : "", name);
}

/* <pid>_dynprof_folders: which host pid, container and command wrote it (output.h). */
static void record_origin(const struct session *s, const struct target *t, const char *name)
{
	struct output_origin o = { name, t->pid, t->nspid, t->container, t->command };
	int rc = output_record_origin(s->output, &o);

	if (rc)
		report_target_error(t->pid, "dynprof: cannot add %s to %s/%d_dynprof_folders: %s",
				    name, s->output, (int)getpid(), strerror(-rc));
}

/* One folder's move, done (rc as target_results_move's): said, counted, recorded. */
static void prof_moved(struct prof_report *r, const char *prof, const char *name, int rc,
		       const struct fshelper_copied *copied)
{
	if (rc < 0) {
		move_failed(r, prof, rc);
		return;
	}
	say_skipped(r->t, prof, copied);
	if (rc == 1)
		report_warning("dynprof: pid %d: %s was copied to %s but could not be removed from %s",
			       r->t->pid, prof, r->s->output, r->t->result_inside);
	r->s->prof_dirs++;
	claimed(r->s, r->t, prof);
	rc = output_record(r->s->output, name);
	if (rc)
		report_target_error(r->t->pid,
				    "dynprof: cannot add %s to %s/%d_profiling_output_record: %s",
				    name, r->s->output, (int)getpid(), strerror(-rc));
	record_origin(r->s, r->t, name);
	saved(r, name);
}

static struct fshelper_limits window_limits(const struct session *s)
{
	return (struct fshelper_limits){ s->opts->window_max_bytes, s->opts->window_max_files };
}

static void report_prof_dir(void *ctx, const char *prof)
{
	struct prof_report *r = ctx;
	struct fshelper_limits lim = window_limits(r->s);
	struct fshelper_copied copied;
	char name[PATH_MAX];
	int rc;

	snprintf(name, sizeof(name), "%s", prof);
	if (target_results_elsewhere(r->t)) /* written inside its container: brought out */
		moved_name(r->s, r->t, prof, name, sizeof(name));
	rc = target_results_move(r->t, prof, r->s->output, name, &lim, &copied);
	prof_moved(r, prof, name, rc, &copied);
}

static void scan_failed(struct prof_report *r, int rc)
{
	const char *why = rc == -ETIME ?
				  "its copy did not end within --window-copy-time" :
			  rc == -ETIMEDOUT ?
				  "its filesystem did not answer within 5 s (a file that blocks?)" :
				  strerror(-rc);

	report_target_error(r->t->pid, "dynprof: pid %d: cannot look for its PROF_ folders in %s: %s",
			    r->t->pid, r->t->result_inside, why);
	set_reason(r->a, "cannot look for its PROF_ folders in %s: %s", r->t->result_inside, why);
}

/* After a window closed: find, move and record the PROF_ folders the target wrote. */
static void report_new_prof_dirs(struct target *t, struct prof_report *r)
{
	int rc = session_scan_prof_dirs(r->s, t, report_prof_dir, r);

	if (rc)
		scan_failed(r, rc);
}

/* Lost: nothing of it reached --output; said once, with why. */
static void lost_reason(const struct target *t, struct window_account *a, const char *why)
{
	const char *exited = strcmp(a->ended, "exit") ? "" : "the process exited and ";

	set_reason(a, "%s%sno PROF_ folder of it was found in %s", why && *why ? why : "",
		   why && *why ? "; " : exited, t->result_inside);
	report_target_error(t->pid, "dynprof: pid %d: window lost: %s", t->pid, a->reason);
}

/*
 * The record line of a window no rule opened (a rule's own line tells of
 * its windows), with who it was in as a rule's line says it: a container's
 * pid 1 is told apart by its host pid, container and command.
 */
static void record_window(const struct session *s, const struct target *t)
{
	cJSON *w = cJSON_CreateObject();
	int rc;

	if (!w)
		return;
	cJSON_AddNumberToObject(w, "pid", t->pid);
	winaccount_origin_to_json(w, t->nspid, t->container, t->command);
	cJSON_AddNumberToObject(w, "window", t->last_window.number);
	winaccount_to_json(&t->last_window, s->output, w);
	rc = winaccount_record_line(s->output, w);
	if (rc)
		report_warning("dynprof: cannot write the window record %s/%d_dynprof_windows: %s",
			       s->output, (int)getpid(), strerror(-rc));
	cJSON_Delete(w);
}

/* The window's folders are where they will stay: its fate, printed, recorded, evented. */
static void window_finish(struct session *s, struct target *t, struct prof_report *r, const char *why)
{
	struct window_account *a = r->a;

	hostdata_window_write(t->pid, s->output, a, r->ev); /* into the folders now in --output */
	a->closed_us = clock_wall_us();
	if (a->saved + a->incomplete == 0) {
		a->fate = WINDOW_LOST;
		lost_reason(t, a, why);
		s->lost++;
	} else if (a->incomplete || a->failed || a->host_lost) {
		a->fate = WINDOW_INCOMPLETE;
		s->incomplete++;
	} else {
		a->fate = WINDOW_SAVED;
		s->saved++;
	}
	events_window_close_fate(r->ev, window_fate_name(a->fate),
				 a->fate == WINDOW_SAVED ? NULL : a->reason);
	events_window_close_end(r->ev);
	if (!t->window_by_rule)
		record_window(s, t);
	t->window_by_rule = false;
}

/* On the loop's thread, once a collection beside it ended: the rest of window_end. */
static void collected(struct collect *c)
{
	struct session *s = c->ctx;
	struct target *t = c->t;
	struct prof_report r = { s, t, &t->last_window, c->ev };

	session_keepalive_changed(s); /* its connection may be looked at again (collect_head) */
	if (c->list_rc)
		scan_failed(&r, c->list_rc);
	for (size_t i = 0; i < c->n; i++)
		prof_moved(&r, c->res[i].prof, c->res[i].dst, c->res[i].rc, &c->res[i].copied);
	if (c->res_lost)
		set_reason(r.a, "out of memory noting its folders");
	window_finish(s, t, &r, c->has_why ? c->why : NULL);
	if (t->leave_pending) {
		t->leave_pending = false;
		events_target_leave(t->pid, t->leave_reason);
	}
}

/*
 * A window of a target whose folders are in its own filesystem: brought
 * out beside the loop (collect.h), its fate given when that ends. 0, or
 * a negative errno: then it is brought out here.
 */
static int collect_later(struct session *s, struct target *t, struct prof_report *r, const char *why)
{
	struct fshelper_limits lim = window_limits(s);
	char sub[sizeof(t->container)];
	struct collect *c;
	int rc = target_output_subdir(t, s->output, sub, sizeof(sub));

	if (rc) {
		report_warning("dynprof: pid %d: cannot make the folder %s/%s for its container's results: %s; its folders go to %s",
			       t->pid, s->output, t->container, strerror(-rc), s->output);
		sub[0] = '\0';
	}
	c = collect_new(t, s->output, sub, &lim, s->opts->window_copy_ms);
	if (!c)
		return -ENOMEM;
	c->done = collected;
	c->ctx = s;
	/* Stopped by its server's answer: the next window may begin while this copy runs. */
	c->in.finished_only = !why && (!strcmp(t->last_window.ended, "stop") ||
				       !strcmp(t->last_window.ended, "quit"));
	c->ev = r->ev;
	c->has_why = why != NULL;
	snprintf(c->why, sizeof(c->why), "%s", why ? why : "");
	rc = collect_queue(&s->jobs, c);
	if (rc)
		free(c);
	return rc;
}

/*
 * The window open in t ended (`ended`: stop, quit, exit, disconnect,
 * error; `why`: what failed, or NULL): its folders are found, moved and
 * recorded, and it gets one fate, printed, in the record, in its
 * window-close event and in the summary's counts. Folders in the
 * target's own filesystem are brought out beside the loop: the fate comes
 * when that ends (session_settled says when).
 */
static void window_end(struct session *s, struct target *t, const char *ended, const char *why)
{
	struct window_account *a = &t->last_window;
	struct prof_report r = { s, t, a, events_window_close_begin(t->pid) };

	*a = (struct window_account){ .ended = ended, .opened_us = t->window_opened_us, .number = t->windows };
	session_keepalive_changed(s);
	hostdata_window_stop(t->pid);
	target_set_collecting(t, false);
	if (t->fsh && collect_later(s, t, &r, why) == 0)
		return;
	report_new_prof_dirs(t, &r);
	window_finish(s, t, &r, why);
}

/* A window is open in t from now on (START answered, or one was open already). */
static void window_opened(struct session *s, struct target *t, bool by_rule)
{
	session_keepalive_changed(s);
	target_set_collecting(t, true);
	s->windows++;
	t->windows++;
	t->window_opened_us = clock_wall_us();
	t->window_by_rule = by_rule;
	events_window_open(t->pid);
	hostdata_window_open(t->pid, s->opts, t->start_sent_mono);
	t->start_sent_mono = 0;
}

/*
 * Drop a target; one that was announced is announced leaving, with why.
 * A window open in it ends first, accounted (`why`: what failed, or NULL).
 */
static void leave(struct session *s, struct target *t, const char *reason, const char *why)
{
	if (t->collecting && !t->dropped)
		window_end(s, t, reason, why);
	if (t->joined && !t->dropped && t->collect_head) { /* told after its window's end */
		t->leave_pending = true;
		snprintf(t->leave_reason, sizeof(t->leave_reason), "%s", reason);
	} else if (t->joined && !t->dropped)
		events_target_leave(t->pid, reason);
	target_drop(t);
}

void session_print_summary(const struct session *s)
{
	int targets = 0, open = s->windows - s->saved - s->incomplete - s->lost;

	/* Joins reuse the slots of targets that left: count the joins. */
	for (int i = 0; i < s->ntargets && !s->launch; i++)
		targets += s->targets[i]->joined;
	if (s->launch)
		targets = s->joined;
	report_info("summary: %d target%s joined, %d window%s opened, %d PROF_ folder%s in %s; windows: %d saved, %d saved incomplete, %d lost",
		    targets, targets == 1 ? "" : "s", s->windows, s->windows == 1 ? "" : "s", s->prof_dirs,
		    s->prof_dirs == 1 ? "" : "s", s->output, s->saved, s->incomplete, s->lost);
	if (open)
		report_warning("summary: %d window%s not accounted for", open, open == 1 ? "" : "s");
}

/*
 * A target gone by its exit: launch mode's "target left" line, attach
 * mode msprof's line; its window's fate follows.
 */
static void say_exited(const struct session *s, const struct target *t, bool exited)
{
	if (s->launch)
		report_info("target left: pid %d (%s)", t->pid, exited ? "exited" : "connection closed");
	else
		report_plain("server process %d did not create socket, or process has already exited",
			     t->pid);
}

static void departed(struct session *s, struct target *t, int kind, bool gone);

/* "Server disconnected" with why: v1's own words (`detail`), else what the counts explain. */
static void say_disconnected(const struct target *t, const char *detail)
{
	char why[PROTO_V1_DETAIL_MAX + 96];
	int64_t now = clock_ms();

	if (detail[0])
		snprintf(why, sizeof(why), "%s", detail);
	else
		server_cause_text(server_disconnect_cause(&t->limits, &t->count, now, false),
				  &t->limits, &t->count, now, why, sizeof(why));
	report_plain("Server disconnected, %s (pid %d)", why, t->pid);
}

/*
 * The server pushed DISCONNECT: it has quit (stopping its window). A
 * reason is printed only when the server gave one (v1) or a limit counted
 * explains it; a v2 process that exits is "target left" (it says nothing).
 * Whether it exits is known a moment later (session_depart.c).
 */
static void on_disconnect(struct session *s, struct target *t, const struct target_outcome *out)
{
	target_drain(t, 1); /* its QUIT_RSP: sent once the window is finalised */
	if (!out->reply.detail[0] && server_disconnect_cause(&t->limits, &t->count, clock_ms(),
							     false) != SERVER_CAUSE_REQUESTS) {
		session_depart(s, t, DEPART_DISCONNECT, departed);
		return;
	}
	say_disconnected(t, out->reply.detail);
	session_depart(s, t, DEPART_SAID, departed);
}

static void fail_line(const struct target *t, enum proto_command cmd, const struct target_outcome *out)
{
	if (out->reason[0])
		report_target_error(t->pid, "dynamic profiling for pid %d %s failed: %s", t->pid,
				    proto_command_name(cmd), out->reason);
	else
		report_target_error(t->pid, "dynamic profiling for pid %d %s failed", t->pid,
				    proto_command_name(cmd));
}

static void v1_detail(const struct target *t, const struct target_outcome *out)
{
	if (t->proto == PROTO_V1 && out->reply.detail[0])
		report_info("pid %d: %s", t->pid, out->reply.detail);
}

static void start_result(struct session *s, struct target *t, const struct target_outcome *out, bool by_rule)
{
	switch (out->reply.status) {
	case PROTO_OK:
		/* Said once dynprof's own collection (--host-sys probes) is in place too. */
		window_opened(s, t, by_rule);
		report_plain("dynamic profiling for pid %d start success", t->pid);
		break;
	case PROTO_ALREADY_STARTED:
		report_warning("dynamic profiling for pid %d already started", t->pid);
		/* Open, and now ours: its STOP and its folder are accounted as any window's. */
		if (!t->collecting)
			window_opened(s, t, by_rule);
		break;
	case PROTO_NOT_SET_DEVICE:
		report_warning("dynamic profiling device for pid %d has not been set up", t->pid);
		break;
	default:
		fail_line(t, PROTO_CMD_START, out);
		leave(s, t, "error", out->reason);
	}
}

/*
 * A stop or quit answered OK where dynprof opened no window: the windows
 * an earlier client left open (found at connect) that it finished are
 * this window's end, reported as any other. true when there was one.
 */
static bool inherited_ended(struct session *s, struct target *t, const char *ended)
{
	char name[NAME_MAX + 1];
	int n = 0;

	for (const char *p = t->inherited; output_prof_known_next(&p, name, sizeof(name));)
		if (winaccount_prof_finished(s->output, name) == 1)
			n += output_prof_known_drop(&t->prof_seen, name);
	free(t->inherited);
	t->inherited = NULL;
	if (!n)
		return false;
	window_opened(s, t, false);
	t->window_opened_us = 0; /* not known: an earlier client opened it */
	window_end(s, t, ended, NULL);
	return true;
}

static void stop_result(struct session *s, struct target *t, const struct target_outcome *out)
{
	switch (out->reply.status) {
	case PROTO_OK:
		report_plain("dynamic profiling for pid %d stop success", t->pid);
		if (t->collecting)
			window_end(s, t, "stop", NULL);
		else if (t->inherited && inherited_ended(s, t, "stop")) {
			/* an earlier client's window, reported */
		}
		break;
	case PROTO_NOT_STARTED:
		report_warning("dynamic profiling for pid %d has not started", t->pid);
		/* A window we opened ended without us: its folder may be there all the same. */
		if (t->collecting)
			window_end(s, t, "stop", "the server says it was not collecting");
		break;
	default:
		fail_line(t, PROTO_CMD_STOP, out);
		leave(s, t, "error", out->reason[0] ? out->reason : "stop failed");
	}
}

static void quit_result(struct session *s, struct target *t, const struct target_outcome *out)
{
	if (out->reply.status == PROTO_OK)
		report_plain("dynamic profiling for pid %d quit success", t->pid);
	else
		fail_line(t, PROTO_CMD_QUIT, out);
	/* QUIT also stops an open window on the server side. */
	if (t->collecting && out->reply.status == PROTO_OK)
		window_end(s, t, "quit", NULL);
	else if (out->reply.status == PROTO_OK && t->inherited && inherited_ended(s, t, "quit")) {
		/* an earlier client's window, reported */
	}
	leave(s, t, out->reply.status == PROTO_OK ? "quit" : "error",
	      out->reason[0] ? out->reason : "quit failed");
}

static void apply_result(struct session *s, struct target *t, enum proto_command cmd, bool by_rule)
{
	struct target_outcome out;

	target_finish_command(t, cmd, s->opts->timeout_ms, &out);
	t->last_status = out.reply.status;
	t->last_reply_us = t->xchg.finished_wall_us;
	if (out.reply.status == PROTO_DISCONNECTED) {
		on_disconnect(s, t, &out);
		return;
	}
	v1_detail(t, &out);
	if (cmd == PROTO_CMD_START)
		start_result(s, t, &out, by_rule);
	else if (cmd == PROTO_CMD_STOP)
		stop_result(s, t, &out);
	else
		quit_result(s, t, &out);
}

/*
 * v1: what is in the result folder before START is not this window's (the
 * folder appears at START, docs/PROTOCOL.md Part 2 section 0 item 10).
 */
static void snapshot_prof_dirs(struct session *s, struct target *t)
{
	if (t->proto == PROTO_V1 && !t->collecting && session_scan_prof_dirs(s, t, NULL, NULL)) {
		/* Unreadable now: the look after its stop says its own failure. */
	}
}

/*
 * Commands, each target's in its own queue: a command is queued to every
 * target it is for, and a target's next one begins when its reply to the
 * one before came (or its deadline passed). No target waits for another's
 * reply, and nothing waits in the loop: the exchanges under way are a
 * source of the loop (session_flight_*), each reply applied when it came,
 * those of one round in --pid order. Only the run's end waits for them.
 */

/* Queue c for t; false when its queue is full (said, not sent). */
static bool enqueue(struct target *t, const struct target_command *c)
{
	if (t->queued == TARGET_QUEUE_MAX) {
		report_target_error(t->pid, "dynprof: pid %d: %d commands wait for its reply; %s not sent",
				    t->pid, TARGET_QUEUE_MAX, proto_command_name(c->cmd));
		return false;
	}
	t->queue[t->queued++] = *c;
	return true;
}

static struct target_command dequeue(struct target *t)
{
	struct target_command c = t->queue[0];

	memmove(t->queue, t->queue + 1, (size_t)(--t->queued) * sizeof(t->queue[0]));
	return c;
}

/* Begin the next queued command of the target at index when it has none under way. */
static void pump(struct session *s, int index)
{
	struct target *t = s->targets[index];

	/* While its new connection is made beside the loop, its commands wait. */
	while (!t->in_flight && !t->dropped && !t->departing && t->queued) {
		struct target_command c;

		/* A START that waited for a reply: its room (a reconnect near a limit) made now. */
		if (t->queue[0].cmd == PROTO_CMD_START && t->queue[0].waited && s->keep_connection) {
			t->queue[0].waited = false;
			(void)s->keep_connection(s, index, true); /* may queue a QUIT before it */
			continue;
		}
		c = dequeue(t);
		if (c.collecting_only && !t->collecting)
			continue; /* a STOP of the run's end, or of quit SEL, for a window not open */
		t->last_command = c.serial;
		if (c.cmd == PROTO_CMD_START) {
			collect_next_started(t); /* before it is sent: its folder may appear at once */
			t->start_sent_mono = clock_mono_ns(); /* --host-sys-before counts back from here */
			snapshot_prof_dirs(s, t);
		}
		target_prepare_command(t, c.cmd, clock_ms() + s->opts->timeout_ms);
		t->sending = c;
		t->in_flight = true;
		s->flights++;
		session_shape_changed(s);
		exchange_begin(&t->xchg);
	}
}

/* A reply (or its failure) applied, the engine told, the target's next command begun. */
static void replied(struct session *s, struct target *t, int index)
{
	struct target_command c = t->sending;

	t->in_flight = false;
	s->flights--;
	session_shape_changed(s);
	session_keepalive_changed(s);
	if (t->dropped) { /* it left meanwhile (beside the loop): no reply to tell */
		t->queued = 0;
		return;
	}
	apply_result(s, t, c.cmd, c.by_rule);
	if (c.by_rule && s->on_reply && !t->dropped && !t->departing)
		s->on_reply(s->on_reply_ctx, index, c.cmd);
	pump(s, index);
}

void session_pump(struct session *s, int index)
{
	pump(s, index);
}

/* Step every exchange under way; apply those that ended, in --pid order. True if any did. */
static bool flights_step(struct session *s)
{
	bool any = false;

	if (!s->flights)
		return false;
	session_batch_begin(s); /* --output is listed once for all of them */
	for (int i = 0; i < s->ntargets; i++) {
		struct target *t = s->targets[i];

		if (!t->in_flight)
			continue;
		if (!t->dropped && exchange_pending(&t->xchg))
			exchange_step(&t->xchg); /* non-blocking; its deadline looked at too */
		if (t->dropped || !exchange_pending(&t->xchg)) {
			replied(s, t, i);
			any = true;
		}
	}
	session_batch_end(s);
	return any;
}

/* Wait for every command queued to end (the run's end: each under its deadline). */
static void flights_drain(struct session *s)
{
	struct exchange **xs = calloc((size_t)s->ntargets + 1, sizeof(*xs));

	while (s->flights) {
		int n = 0;

		for (int i = 0; xs && i < s->ntargets; i++)
			if (s->targets[i]->in_flight && exchange_pending(&s->targets[i]->xchg))
				xs[n++] = &s->targets[i]->xchg;
		if (xs)
			exchange_run(xs, n);
		for (int i = 0; !xs && i < s->ntargets; i++) /* no room to wait: they fail */
			if (s->targets[i]->in_flight)
				exchange_abandon(&s->targets[i]->xchg, -ENOMEM);
		flights_step(s);
	}
	free(xs);
}

/*
 * Queue `cmd` for the live targets: all, or those `which` marks (NULL:
 * all); with collecting_only, only those of them that collect when it
 * begins. Those that were free begin at once.
 */
static void fan_out(struct session *s, enum proto_command cmd, bool collecting_only,
		    const bool *which, bool by_rule)
{
	struct target_command c = { .cmd = cmd, .by_rule = by_rule, .collecting_only = collecting_only };

	c.serial = ++s->command_serial;
	for (int i = 0; i < s->ntargets; i++) {
		struct target *t = s->targets[i];

		/* A joining one is started when its handshake ends, if the window is open then. */
		if (t->dropped || t->handshaking || t->departing || (which && !which[i]))
			continue;
		c.waited = t->in_flight || t->queued;
		if (enqueue(t, &c))
			pump(s, i);
	}
	session_flight_step(s); /* all answered at once: applied now */
}

int session_flight_room(const struct session *s)
{
	return s->flights;
}

int session_flight_pollfds(const struct session *s, struct pollfd *pfds, int max)
{
	int n = 0;

	for (int i = 0; i < s->ntargets && n < max; i++)
		if (s->targets[i]->in_flight)
			n += exchange_pollfd(&s->targets[i]->xchg, &pfds[n]);
	return n;
}

void session_flight_step(struct session *s)
{
	while (flights_step(s)) {
		/* A reply may begin a next command that ends at once (a closed connection). */
	}
}

int64_t session_flight_timeout_ms(const struct session *s)
{
	int64_t nearest = -1;

	for (int i = 0; s->flights && i < s->ntargets; i++) {
		const struct exchange *x = &s->targets[i]->xchg;

		if (!s->targets[i]->in_flight)
			continue;
		/* Ended as it began (its reply was there at once): no fd wakes the loop for it. */
		if (!exchange_pending(x))
			return 0;
		if (nearest < 0 || x->deadline < nearest)
			nearest = x->deadline;
	}
	return nearest < 0 ? -1 : clock_ms_left(nearest);
}

void session_on_reply(struct session *s, void (*fn)(void *ctx, int index, enum proto_command cmd),
		      void *ctx)
{
	s->on_reply = fn;
	s->on_reply_ctx = ctx;
}

void session_command(struct session *s, enum proto_command cmd)
{
	/* The window belongs to the session: targets that join later follow it. */
	if (cmd == PROTO_CMD_START)
		s->window_open = true;
	else if (cmd == PROTO_CMD_STOP)
		s->window_open = false;
	if (s->launch && session_live(s) == 0 && cmd != PROTO_CMD_QUIT)
		report_info("no target yet: %s",
			    cmd == PROTO_CMD_START ? "the window opens in each target as it joins" :
						     "nothing to stop");
	fan_out(s, cmd, false, NULL, false);
}

/* One target: a joiner's START, a rule's command to one. */
static void command_one(struct session *s, int index, enum proto_command cmd, bool by_rule)
{
	bool *which = calloc((size_t)s->ntargets, sizeof(*which));

	if (!which) {
		report_error("dynprof: out of memory sending %s", proto_command_name(cmd));
		return;
	}
	which[index] = true;
	fan_out(s, cmd, false, which, by_rule);
	free(which);
}

void session_command_one(struct session *s, int index, enum proto_command cmd)
{
	command_one(s, index, cmd, false);
}

void session_start_joined(struct session *s, int index)
{
	command_one(s, index, PROTO_CMD_START, false);
}

void session_command_some(struct session *s, enum proto_command cmd, const bool *which)
{
	fan_out(s, cmd, false, which, true);
}

void session_command_chosen(struct session *s, enum proto_command cmd, const bool *which)
{
	fan_out(s, cmd, false, which, false);
}

void session_dismiss(struct session *s, const bool *which)
{
	/* Their start times before QUIT: a process that exits at once is still known by it. */
	for (int i = 0; i < s->ntargets; i++)
		if (which[i] && !s->targets[i]->dropped)
			session_remember_dismissed(s, s->targets[i]->pid);
	fan_out(s, PROTO_CMD_STOP, true, which, false);
	fan_out(s, PROTO_CMD_QUIT, false, which, false);
}

void session_shutdown(struct session *s)
{
	/* Nothing joins (and is started) after this: the run is ending. */
	s->closing = true;
	s->window_open = false;
	if (s->join_finish)
		s->join_finish(s);
	fan_out(s, PROTO_CMD_STOP, true, NULL, false);
	fan_out(s, PROTO_CMD_QUIT, false, NULL, false);
	/* A reconnect beside the loop sends its queue when it ends. */
	do {
		flights_drain(s);
		offloop_drain(&s->jobs);
	} while (s->flights);
	session_depart_finish(s); /* its leave may begin a collection */
	/* Every window's folders brought out (each collection has its deadline) before the summary. */
	offloop_drain(&s->jobs);
}

int session_jobs_fd(const struct session *s)
{
	return offloop_fd(&s->jobs);
}

int session_jobs_pending(struct session *s)
{
	return offloop_pending(&s->jobs) + s->departures;
}

void session_jobs_event(struct session *s)
{
	/*
	 * Not marked for the keepalive here: a collection's end marks it
	 * (collected), a join's handshake is no connection it looks at; a walk
	 * of every connection between a join's handshake and its reply was a
	 * tenth of a join with 1000 served.
	 */
	offloop_reap(&s->jobs);
}

/* Whether the command numbered serial went to t and waits for its reply. */
static bool command_pending(const struct target *t, unsigned serial)
{
	if (t->in_flight && t->sending.serial == serial)
		return true;
	for (int i = 0; i < t->queued; i++)
		if (t->queue[i].serial == serial)
			return true;
	return false;
}

bool session_replied(const struct session *s, unsigned serial)
{
	for (int i = 0; i < s->ntargets; i++)
		if (command_pending(s->targets[i], serial))
			return false;
	return true;
}

static bool unsettled(const struct target *t, unsigned serial)
{
	return command_pending(t, serial) ||
	       ((t->collect_head || t->departing) && t->last_command >= serial);
}

/*
 * Asked every round while a command waits (a script's or the control's):
 * the target found unsettled last time is looked at first, so a window
 * whose copy takes minutes costs one look a round, not a walk of 1000.
 */
bool session_settled(const struct session *s, unsigned serial)
{
	struct session *w = (struct session *)s; /* the hint only */

	if (s->settle_hint < s->ntargets && unsettled(s->targets[s->settle_hint], serial))
		return false;
	for (int i = 0; i < s->ntargets; i++)
		if (unsettled(s->targets[i], serial)) {
			w->settle_hint = i;
			return false;
		}
	return true;
}

bool session_target_settled(const struct session *s, int index)
{
	/* A departing one's window ends when it has left. */
	return !s->targets[index]->collect_head && !s->targets[index]->departing;
}

/* A connection only the idle watch looks at: no command's, no join's. */
static bool idle(const struct target *t)
{
	return !t->dropped && !t->in_flight && !t->handshaking && !t->departing && t->fd >= 0;
}

static int watch(struct session *s, struct target *t)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = t->fd };

	if (epoll_ctl(s->idle_ep, EPOLL_CTL_ADD, t->fd, &ev) < 0 && errno != EEXIST)
		return -errno;
	t->ep = s->idle_ep;
	t->ep_fd = t->fd;
	return 0;
}

/*
 * The idle set made to hold the idle targets' fds, no other: a user-space
 * pass, system calls only for what changed since the last round. False
 * when there is no set (no epoll fd to be had): they are polled one by one.
 */
static bool idle_sync(struct session *s)
{
	if (!s->idle_ep_made) {
		s->idle_ep = epoll_create1(EPOLL_CLOEXEC);
		if (s->idle_ep < 0)
			return false;
		s->idle_ep_made = true;
	}
	if (!session_shape_moved(s, &s->idle_mark))
		return true;
	for (int i = 0; i < s->ntargets; i++) {
		struct target *t = s->targets[i];

		if (t->ep_fd >= 0 && (!idle(t) || t->ep_fd != t->fd))
			target_unwatch_idle(t);
		if (idle(t) && t->ep_fd < 0 && watch(s, t)) {
			s->idle_mark.seen = false; /* walked again next round */
			return false;
		}
	}
	return true;
}

int session_idle_pollfds(struct session *s, struct pollfd *pfds, int max)
{
	int n = 0;

	if (max > 0 && idle_sync(s)) {
		pfds[0] = (struct pollfd){ .fd = s->idle_ep, .events = POLLIN };
		return 1;
	}
	for (int i = 0; i < s->ntargets && n < max; i++) {
		/* A command's reply is the flight's to read (session_flight_pollfds). */
		if (!idle(s->targets[i]))
			continue;
		pfds[n].fd = s->targets[i]->fd;
		pfds[n].events = POLLIN;
		pfds[n].revents = 0;
		n++;
	}
	return n;
}

static struct target *by_fd(struct session *s, int fd)
{
	for (int i = 0; i < s->ntargets; i++)
		if (!s->targets[i]->dropped && s->targets[i]->fd == fd)
			return s->targets[i];
	return NULL;
}

/* Gone without a word (an exit, a crash, a reset): its window, if open, is accounted at once. */
static void lost(struct session *s, struct target *t, const char *reason)
{
	say_exited(s, t, !strcmp(reason, "exit"));
	leave(s, t, reason, NULL);
}

/* A departing target settled (session_depart.c): what its kind asks said, and it leaves. */
static void departed(struct session *s, struct target *t, int kind, bool gone)
{
	const char *reason = gone ? "exit" : "disconnect";

	if (kind == DEPART_LOST) {
		lost(s, t, reason);
		return;
	}
	if (kind == DEPART_DISCONNECT && gone)
		say_exited(s, t, true);
	else if (kind == DEPART_DISCONNECT)
		say_disconnected(t, "");
	leave(s, t, reason, NULL);
}

/* Target t's connection was seen ready (revents): what it says, or its end. */
static void idle_one(struct session *s, struct target *t, short revents)
{
	struct target_outcome out;
	struct pollfd now = { .fd = t->fd, .events = POLLIN };

	if (!(revents & (POLLIN | POLLHUP | POLLERR)))
		return;
	/*
	 * Looked at again: the event may be of an fd closed and reused in
	 * this round (a target left, a joiner got its number), which has
	 * nothing to say.
	 */
	if (poll(&now, 1, 0) != 1)
		return;
	session_keepalive_changed(s);
	target_read_unsolicited(t, &out);
	if (out.reply.status == PROTO_DISCONNECTED)
		on_disconnect(s, t, &out);
	else if (t->xchg.result == -ECONNRESET)
		session_depart(s, t, DEPART_LOST, departed);
	else {
		report_target_error(t->pid, "dynprof: pid %d: %s; dropping it", t->pid, out.reason);
		leave(s, t, "error", out.reason);
	}
}

#define IDLE_BATCH 256 /* ready idle targets read per round; more wait for the next */

/* Those of the idle set that are ready, each as its own pollfd would have been. */
static void idle_ready(struct session *s)
{
	struct epoll_event ev[IDLE_BATCH];
	int n = epoll_wait(s->idle_ep, ev, IDLE_BATCH, 0);

	for (int i = 0; i < n; i++) {
		struct target *t = by_fd(s, ev[i].data.fd);

		/* Became a command's or left earlier in this round: not the idle watch's. */
		if (!t || !idle(t) || t->ep_fd != t->fd)
			continue;
		idle_one(s, t,
			 (short)((ev[i].events & EPOLLIN ? POLLIN : 0) |
				 (ev[i].events & EPOLLHUP ? POLLHUP : 0) |
				 (ev[i].events & EPOLLERR ? POLLERR : 0)));
	}
}

void session_idle_event(struct session *s, const struct pollfd *pfd)
{
	struct target *t;

	if (s->idle_ep_made && pfd->fd == s->idle_ep)
		idle_ready(s);
	else if ((t = by_fd(s, pfd->fd)))
		idle_one(s, t, pfd->revents);
}

/*
 * The process `pid` exited. What its server said on its way out (a v1
 * DISCONN_RSP with its reason) may still wait unread on the connection:
 * read first, so the reason is not lost to the exit report's race.
 */
static void exited(struct session *s, struct target *t)
{
	struct pollfd p = { .fd = t->fd, .events = POLLIN };

	if (!t->departing && t->fd >= 0 && poll(&p, 1, 0) == 1)
		idle_one(s, t, p.revents);
	session_depart_gone(s, t); /* it was waiting for this */
	if (!t->dropped)
		lost(s, t, "exit");
}

/*
 * Told of every process's exit on the host: through the pid index (a
 * held pid's slot is the last given that pid), not a walk of the table.
 */
void session_target_exited(struct session *s, int pid)
{
	struct target *t;

	if (s->join_exited && s->join_exited(s, pid))
		return; /* it had not joined: nothing to tell */
	if (!s->index_incomplete) {
		t = pidtab_get(&s->bypid, pid);
		if (t && t->pid == pid && !t->dropped)
			exited(s, t);
		return;
	}
	for (int i = 0; i < s->ntargets; i++)
		if (!s->targets[i]->dropped && s->targets[i]->pid == pid)
			exited(s, s->targets[i]);
}

void session_close(struct session *s)
{
	if (!s)
		return;
	flights_drain(s);
	s->closing = true;       /* a join ending below takes no slot */
	offloop_close(&s->jobs); /* the collections still running end first: they use the targets */
	for (int i = 0; i < s->ntargets; i++) {
		target_free(s->targets[i]);
		free(s->targets[i]);
	}
	free(s->targets);
	free(s->hs);
	output_listing_free(&s->listing);
	session_forget_dismissed(s);
	pidtab_free(&s->bypid);
	if (s->idle_ep_made)
		close(s->idle_ep); /* every target's fd left it above (target_close) */
	free(s);
	watchdog_done(); /* every connection released above: it exits touching nothing */
}
