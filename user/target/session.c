// SPDX-License-Identifier: MIT
/*
 * Commands to every target at once, their results in msprof's words, the
 * window state per target, and the shutdown that leaves nothing collecting.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared/clock.h"
#include "out/copytree.h"
#include "out/events_out.h"
#include "out/output.h"
#include "proc/procfs.h"
#include "out/report.h"
#include "target/session.h"
#include "target/target_origin.h"

int session_live(const struct session *s)
{
	int n = 0;

	for (int i = 0; i < s->ntargets; i++)
		n += !s->targets[i].dropped;
	return n;
}

int session_target_count(const struct session *s)
{
	return s->ntargets;
}

int session_target_pid(const struct session *s, int index)
{
	return s->targets[index].pid;
}

const struct target *session_target(const struct session *s, int index)
{
	return &s->targets[index];
}

bool session_target_live(const struct session *s, int index)
{
	return !s->targets[index].dropped;
}

bool session_target_collecting(const struct session *s, int index)
{
	return s->targets[index].collecting;
}

int session_target_requests(const struct session *s, int index)
{
	return s->targets[index].count.commands;
}

int session_target_last_status(const struct session *s, int index)
{
	return s->targets[index].last_status;
}

int64_t session_target_last_reply_us(const struct session *s, int index)
{
	return s->targets[index].last_reply_us;
}

struct prof_report {
	struct session *s;
	struct target *t;
	struct events_close *ev; /* the window-close event being filled */
};

/* Drop a target; one that was announced is announced leaving, with why. */
static void leave(struct target *t, const char *reason)
{
	if (t->joined && !t->dropped)
		events_target_leave(t->pid, reason);
	target_drop(t);
}

/*
 * A v1 folder carries no pid: once one target claimed it, the other v1
 * targets writing to the same folder must not claim it too.
 */
static void claimed(struct session *s, const struct target *by, const char *name)
{
	for (int i = 0; i < s->ntargets; i++) {
		struct target *t = &s->targets[i];

		if (t == by || t->proto != PROTO_V1 || strcmp(t->result_host, by->result_host))
			continue;
		if (output_prof_known_add(&t->prof_seen, name))
			report_target_error(t->pid, "dynprof: out of memory noting %s", name);
	}
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
		report_target_error(t->pid, "dynprof: cannot add %s to %s/%d_dynprof_folders: %s", name,
				    s->output, (int)getpid(), strerror(-rc));
}

static void report_prof_dir(void *ctx, const char *prof)
{
	struct prof_report *r = ctx;
	char src[2 * PATH_MAX], dst[2 * PATH_MAX], name[PATH_MAX];
	int rc;

	snprintf(name, sizeof(name), "%s", prof);
	if (r->t->result_fd >= 0) { /* written inside its container: bring it out */
		moved_name(r->s, r->t, prof, name, sizeof(name));
		snprintf(src, sizeof(src), "%s/%s", r->t->result_host, prof);
		snprintf(dst, sizeof(dst), "%s/%s", r->s->output, name);
		rc = copytree_move(src, dst, r->s->opts->window_max_bytes);
		if (rc) {
			report_target_error(r->t->pid, "dynprof: pid %d: cannot move %s/%s to %s: %s", r->t->pid,
				     r->t->result_inside, prof, dst,
				     rc == -EFBIG ? "it holds more than --window-max-size, left where it is" :
				     rc == -EINTR ? "stopped by a signal, left where it is" : strerror(-rc));
			return;
		}
	}
	r->s->prof_dirs++;
	claimed(r->s, r->t, prof);
	rc = output_record(r->s->output, name);
	if (rc)
		report_target_error(r->t->pid, "dynprof: cannot add %s to %s/%d_profiling_output_record: %s",
				    name, r->s->output, (int)getpid(), strerror(-rc));
	record_origin(r->s, r->t, name);
	report_info("pid %d: window saved in %s/%s", r->t->pid, r->s->output, name);
	snprintf(dst, sizeof(dst), "%s/%s", r->s->output, name);
	events_window_close_add(r->ev, dst);
}

/* After a window closed: name the PROF_ folders the target wrote. */
static void report_new_prof_dirs(struct session *s, struct target *t)
{
	struct prof_report r = { s, t, events_window_close_begin(t->pid) };
	int rc = output_new_prof_dirs(t->result_host, target_prof_names(t), &t->prof_seen, report_prof_dir, &r);

	if (rc)
		report_target_error(t->pid, "dynprof: pid %d: cannot look for its PROF_ folders in %s: %s",
				    t->pid, t->result_inside, strerror(-rc));
	events_window_close_end(r.ev);
}

#define EXIT_GRACE_MS 200

/*
 * A server that ends the connection (DISCONNECT, or a plain close) is
 * usually exiting: CANN says goodbye from its exit path, and the files
 * close before the process becomes a zombie. Give it a moment.
 */
static bool exiting(const struct target *t)
{
	int64_t end = clock_ms() + EXIT_GRACE_MS;

	while (procfs_alive(t->pid)) {
		if (clock_ms() >= end)
			return false;
		usleep(5000);
	}
	return true;
}

/* Only the event needs the distinction: without --events, no wait. */
static const char *closed_reason(const struct target *t)
{
	return events_enabled() && exiting(t) ? "exit" : "disconnect";
}

/*
 * Why the server ended the connection: v1 says it (CANN's detail text);
 * a v2 DISCONNECT carries nothing, so the counts tell: the request limit,
 * the process exiting, the idle limit, else unknown.
 */
static void disconnect_why(const struct target *t, const struct target_outcome *out, bool *gone,
			   char *buf, size_t len)
{
	int64_t now = clock_ms();
	enum server_cause cause;

	*gone = false;
	if (out->reply.detail[0]) {
		snprintf(buf, len, "%s", out->reply.detail);
		return;
	}
	cause = server_disconnect_cause(&t->limits, &t->count, now, false);
	if (cause != SERVER_CAUSE_REQUESTS && exiting(t)) {
		*gone = true;
		cause = SERVER_CAUSE_EXIT;
	}
	server_cause_text(cause, &t->limits, &t->count, now, buf, len);
}

/* The server pushed DISCONNECT: it has quit (stopping its window). */
static void on_disconnect(struct session *s, struct target *t, const struct target_outcome *out)
{
	bool was_collecting = t->collecting, gone;
	char why[PROTO_V1_DETAIL_MAX + 96];

	target_drain(t, 1); /* its QUIT_RSP */
	disconnect_why(t, out, &gone, why, sizeof(why));
	report_plain("Server disconnected, %s (pid %d)", why, t->pid);
	leave(t, gone ? "exit" : closed_reason(t));
	if (was_collecting)
		report_new_prof_dirs(s, t);
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

static void start_result(struct session *s, struct target *t, const struct target_outcome *out)
{
	switch (out->reply.status) {
	case PROTO_OK:
		target_set_collecting(t, true);
		s->windows++;
		report_plain("dynamic profiling for pid %d start success", t->pid);
		events_window_open(t->pid);
		break;
	case PROTO_ALREADY_STARTED:
		target_set_collecting(t, true);
		report_warning("dynamic profiling for pid %d already started", t->pid);
		break;
	case PROTO_NOT_SET_DEVICE:
		report_warning("dynamic profiling device for pid %d has not been set up", t->pid);
		break;
	default:
		fail_line(t, PROTO_CMD_START, out);
		leave(t, "error");
	}
}

static void stop_result(struct session *s, struct target *t, const struct target_outcome *out)
{
	switch (out->reply.status) {
	case PROTO_OK:
		target_set_collecting(t, false);
		report_plain("dynamic profiling for pid %d stop success", t->pid);
		report_new_prof_dirs(s, t);
		break;
	case PROTO_NOT_STARTED:
		target_set_collecting(t, false);
		report_warning("dynamic profiling for pid %d has not started", t->pid);
		break;
	default:
		fail_line(t, PROTO_CMD_STOP, out);
		leave(t, "error");
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
		report_new_prof_dirs(s, t);
	leave(t, out->reply.status == PROTO_OK ? "quit" : "error");
}

static void apply_result(struct session *s, struct target *t, enum proto_command cmd)
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
		start_result(s, t, &out);
	else if (cmd == PROTO_CMD_STOP)
		stop_result(s, t, &out);
	else
		quit_result(s, t, &out);
}

/*
 * v1: what is in the result folder before START is not this window's (the
 * folder appears at START, PROTOCOL.md Part 2 section 0 item 10).
 */
static void snapshot_prof_dirs(struct target *t)
{
	if (t->proto == PROTO_V1 && !t->collecting &&
	    output_new_prof_dirs(t->result_host, OUTPUT_V1_NAMES, &t->prof_seen, NULL, NULL)) {
		/* Unreadable now: the look after its stop says its own failure. */
	}
}

/*
 * Fan `cmd` out to the live targets: all, or those `which` marks (NULL:
 * all); with collecting_only, only those of them that collect.
 */
static void fan_out(struct session *s, enum proto_command cmd, bool collecting_only, const bool *which)
{
	struct exchange **xs = calloc((size_t)s->ntargets + 1, sizeof(*xs));
	bool *sent = calloc((size_t)s->ntargets + 1, sizeof(*sent));
	int64_t deadline = clock_ms() + s->opts->timeout_ms;
	int n = 0;

	if (!xs || !sent) {
		report_error("dynprof: out of memory sending %s", proto_command_name(cmd));
		goto out;
	}
	for (int i = 0; i < s->ntargets; i++) {
		struct target *t = &s->targets[i];

		if (t->dropped || (collecting_only && !t->collecting) || (which && !which[i]))
			continue;
		if (cmd == PROTO_CMD_START)
			snapshot_prof_dirs(t);
		target_prepare_command(t, cmd, deadline);
		xs[n++] = &t->xchg;
		sent[i] = true;
	}
	exchange_run(xs, n);
	for (int i = 0; i < s->ntargets; i++)
		if (sent[i])
			apply_result(s, &s->targets[i], cmd);
out:
	free(xs);
	free(sent);
}

void session_command(struct session *s, enum proto_command cmd)
{
	/* The window belongs to the session: targets that join later follow it. */
	if (cmd == PROTO_CMD_START)
		s->window_open = true;
	else if (cmd == PROTO_CMD_STOP)
		s->window_open = false;
	if (s->launch && session_live(s) == 0 && cmd != PROTO_CMD_QUIT)
		report_info("no target yet: %s", cmd == PROTO_CMD_START ?
			    "the window opens in each target as it joins" : "nothing to stop");
	fan_out(s, cmd, false, NULL);
}

void session_command_one(struct session *s, int index, enum proto_command cmd)
{
	bool *which = calloc((size_t)s->ntargets, sizeof(*which));

	if (!which) {
		report_error("dynprof: out of memory sending %s", proto_command_name(cmd));
		return;
	}
	which[index] = true;
	fan_out(s, cmd, false, which);
	free(which);
}

void session_command_some(struct session *s, enum proto_command cmd, const bool *which)
{
	fan_out(s, cmd, false, which);
}

void session_shutdown(struct session *s)
{
	/* Nothing joins (and is started) after this: the run is ending. */
	s->closing = true;
	s->window_open = false;
	fan_out(s, PROTO_CMD_STOP, true, NULL);
	fan_out(s, PROTO_CMD_QUIT, false, NULL);
}

int session_idle_pollfds(const struct session *s, struct pollfd *pfds, int max)
{
	int n = 0;

	for (int i = 0; i < s->ntargets && n < max; i++) {
		if (s->targets[i].dropped)
			continue;
		pfds[n].fd = s->targets[i].fd;
		pfds[n].events = POLLIN;
		pfds[n].revents = 0;
		n++;
	}
	return n;
}

static struct target *by_fd(struct session *s, int fd)
{
	for (int i = 0; i < s->ntargets; i++)
		if (!s->targets[i].dropped && s->targets[i].fd == fd)
			return &s->targets[i];
	return NULL;
}

static void lost(struct session *s, struct target *t, const char *reason)
{
	if (s->launch)
		report_info("target left: pid %d", t->pid);
	else
		report_plain("server process %d did not create socket, or process has already exited", t->pid);
	leave(t, reason);
}

void session_idle_event(struct session *s, const struct pollfd *pfd)
{
	struct target *t = by_fd(s, pfd->fd);
	struct target_outcome out;

	if (!t || !(pfd->revents & (POLLIN | POLLHUP | POLLERR)))
		return;
	target_read_unsolicited(t, &out);
	if (out.reply.status == PROTO_DISCONNECTED)
		on_disconnect(s, t, &out);
	else if (t->xchg.result == -ECONNRESET)
		lost(s, t, closed_reason(t));
	else {
		report_target_error(t->pid, "dynprof: pid %d: %s; dropping it", t->pid, out.reason);
		leave(t, "error");
	}
}

void session_target_exited(struct session *s, int pid)
{
	for (int i = 0; i < s->ntargets; i++)
		if (!s->targets[i].dropped && s->targets[i].pid == pid)
			lost(s, &s->targets[i], "exit");
}

void session_close(struct session *s)
{
	for (int i = 0; i < s->ntargets; i++)
		target_free(&s->targets[i]);
	free(s->targets);
	s->targets = NULL;
	s->ntargets = 0;
}
