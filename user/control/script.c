// SPDX-License-Identifier: MIT
/* Command scripts (see script.h). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dynprof/proto.h"
#include "shared/clock.h"
#include "common/grow.h"
#include "report/report.h"
#include "common/errbuf.h"
#include "control/script.h"
#include "control/select.h"

#define SCRIPT_MAX_CMDS 4096
#define WAIT_CHECK_MS 50 /* a running wait is checked at least this often */

struct script {
	struct script_host host;
	script_reply_fn reply;
	void *reply_ctx;
	struct script_cmd *cmds;
	int ncmds;
	size_t cap;
	int next;               /* the command to run (or running) */
	bool running;           /* cmds[next] is a sleep or wait in progress */
	int64_t until_ms;       /* sleep: when it ends */
	unsigned serial_before; /* the session's command serial before the running command */
	unsigned sent_serial;   /* and after it: its reply waits until those targets settled */
	int waiter;             /* wait: the trigger engine's waiter */
	bool streaming;         /* `events` ran: the rest is ignored */
	int rule_added;         /* `window`: the rule's number, for its ack */
};

struct script *script_new(const struct script_host *host, script_reply_fn reply, void *reply_ctx)
{
	struct script *sc = calloc(1, sizeof(*sc));

	if (!sc)
		return NULL;
	sc->host = *host;
	sc->reply = reply;
	sc->reply_ctx = reply_ctx;
	sc->waiter = -1;
	return sc;
}

void script_set_host(struct script *sc, const struct script_host *host)
{
	status_stats_fn fn = sc->host.stats;
	void *ctx = sc->host.stats_ctx;

	sc->host = *host;
	if (!sc->host.stats) {
		sc->host.stats = fn;
		sc->host.stats_ctx = ctx;
	}
}

void script_set_stats(struct script *sc, status_stats_fn fn, void *ctx)
{
	sc->host.stats = fn;
	sc->host.stats_ctx = ctx;
}

void script_free(struct script *sc)
{
	if (!sc)
		return;
	if (sc->waiter >= 0 && sc->host.tg)
		triggers_wait_end(sc->host.tg, sc->waiter);
	for (int i = 0; i < sc->ncmds; i++)
		script_cmd_free(&sc->cmds[i]);
	free(sc->cmds);
	free(sc);
}

static void answer(struct script *sc, const char *fmt, const char *arg)
{
	char text[600];

	if (!sc->reply)
		return;
	snprintf(text, sizeof(text), fmt, arg);
	sc->reply(sc->reply_ctx, text);
}

static void answer_number(struct script *sc, const char *fmt, int n)
{
	char text[64];

	if (!sc->reply)
		return;
	snprintf(text, sizeof(text), fmt, n);
	sc->reply(sc->reply_ctx, text);
}

static int append(struct script *sc, const struct script_cmd *cmd)
{
	if (sc->ncmds == SCRIPT_MAX_CMDS ||
	    grow_for_one((void **)&sc->cmds, &sc->cap, (size_t)sc->ncmds, sizeof(*sc->cmds), 16))
		return -1;
	sc->cmds[sc->ncmds++] = *cmd;
	return 0;
}

/* Parse one line into the queue; -1 with err. */
static int parse_into(struct script *sc, const char *line, char *err, size_t errlen)
{
	struct script_cmd cmd;
	if (script_parse_line(line, clock_wall_us() / 1000, &cmd, err, errlen))
		return -1;
	if (cmd.op == SCRIPT_NOP)
		return 0;
	if (append(sc, &cmd)) {
		script_cmd_free(&cmd);
		snprintf(err, errlen, "too many commands (at most %d)", SCRIPT_MAX_CMDS);
		return -1;
	}
	return 0;
}

static FILE *open_commands(const char *path)
{
	return strcmp(path, "-") ? fopen(path, "re") : stdin;
}

int script_load_file(struct script *sc, const char *path)
{
	FILE *f = open_commands(path);
	char *line = NULL, err[512];
	size_t cap = 0;
	ssize_t len;
	int lineno = 0, rc = 0;

	if (!f) {
		report_error("Argument --commands: cannot read %s: %s.", path, strerror(errno));
		return -1;
	}
	while (rc == 0 && (len = getline(&line, &cap, f)) >= 0) {
		lineno++;
		if (len && line[len - 1] == '\n')
			line[--len] = '\0';
		int before = sc->ncmds;

		/* As on --control: a NUL would silently cut the line into another command. */
		if (memchr(line, '\0', (size_t)len)) {
			report_error("dynprof: %s:%d: NUL byte in line", path, lineno);
			rc = -1;
		} else if (parse_into(sc, line, err, sizeof(err))) {
			report_error("dynprof: %s:%d: %s", path, lineno, err);
			rc = -1;
		} else if (sc->ncmds > before && sc->cmds[before].op == SCRIPT_EVENTS) {
			/* A file has no reader to stream to. */
			report_error("dynprof: %s:%d: events needs a unix control socket (--events=json:PATH writes them to a file)",
				     path, lineno);
			rc = -1;
		}
	}
	free(line);
	if (f != stdin)
		fclose(f);
	return rc;
}

int script_conditions(const struct script *sc, const struct condition **out, int max)
{
	int n = 0;

	for (int i = 0; i < sc->ncmds && n < max; i++)
		if (sc->cmds[i].op == SCRIPT_WAIT)
			out[n++] = &sc->cmds[i].cond;
	return n;
}

/* A client's finished commands are forgotten, so a long-lived one never fills up. */
static void forget_done(struct script *sc)
{
	if (sc->next < sc->ncmds)
		return;
	for (int i = 0; i < sc->ncmds; i++)
		script_cmd_free(&sc->cmds[i]);
	sc->ncmds = sc->next = 0;
}

void script_push_line(struct script *sc, const char *line)
{
	char err[512];

	if (sc->streaming)
		return;
	forget_done(sc);
	if (parse_into(sc, line, err, sizeof(err)))
		answer(sc, "error: %s", err);
}

/* start, stop or quit of the targets sel matches now. */
static int run_selected(struct session *s, const struct script_cmd *cmd, char *err, size_t errlen)
{
	bool *which = calloc((size_t)session_target_count(s) + 1, sizeof(*which));
	int n;

	if (!which)
		return errbuf_set(err, errlen, "out of memory");
	n = select_targets(s, &cmd->sel, which, err, errlen);
	if (n > 0 && cmd->op == SCRIPT_START) {
		session_make_room(s); /* a window's START and STOP fit, no idle limit near */
		session_command_chosen(s, PROTO_CMD_START, which);
	} else if (n > 0 && cmd->op == SCRIPT_STOP) {
		session_command_chosen(s, PROTO_CMD_STOP, which);
	} else if (n > 0) {
		session_dismiss(s, which);
	}
	free(which);
	return n > 0 ? 0 : -1;
}

static void run_status(const struct script_host *h, bool json, status_line_fn line, void *ctx)
{
	struct status_stats st = { .mode = "attach" };

	if (h->stats)
		h->stats(h->stats_ctx, &st);
	status_report(h->s, h->tg, &st, json, line, ctx);
}

int script_run_command(const struct script_host *h, const struct script_cmd *cmd,
		       status_line_fn line, void *ctx, char *err, size_t errlen)
{
	if (cmd->op == SCRIPT_STATUS) {
		run_status(h, cmd->json, line, ctx);
		return 0;
	}
	if (cmd->sel.kind != SEL_ALL)
		return run_selected(h->s, cmd, err, errlen);
	switch (cmd->op) {
	case SCRIPT_START:
		session_make_room(h->s); /* a window's START and STOP fit, no idle limit near */
		session_command(h->s, PROTO_CMD_START);
		break;
	case SCRIPT_STOP:
		session_command(h->s, PROTO_CMD_STOP);
		break;
	case SCRIPT_QUIT:
		if (h->quit_requested)
			*h->quit_requested = true;
		break;
	default:
		break;
	}
	return 0;
}

/* A status line: to the client, or (a --commands file) to standard output. */
static void status_line(void *ctx, const char *text)
{
	struct script *sc = ctx;

	if (sc->reply)
		sc->reply(sc->reply_ctx, text);
	else
		report_plain("%s", text);
}

static void begin_events(struct script *sc, char *err, size_t errlen)
{
	if (!sc->host.stream) {
		snprintf(err, errlen, "events needs a unix control socket");
		return;
	}
	sc->streaming = !sc->host.stream(sc->reply_ctx, err, errlen);
}

/* `events` ran: what was queued after it is dropped, as what comes later is. */
static void end_commands(struct script *sc)
{
	for (int i = sc->next; i < sc->ncmds; i++)
		script_cmd_free(&sc->cmds[i]);
	sc->ncmds = sc->next;
}

/* Begin a command; true when it is already done (err set when it was refused). */
static bool begin(struct script *sc, struct script_cmd *cmd, char *err, size_t errlen)
{
	switch (cmd->op) {
	case SCRIPT_START:
	case SCRIPT_STOP:
	case SCRIPT_QUIT:
		if (script_run_command(&sc->host, cmd, status_line, sc, err, errlen) && !err[0])
			snprintf(err, errlen, "%s failed", script_op_name(cmd->op));
		/* The reply tells each window's fate: it waits for folders still being brought out. */
		sc->sent_serial = session_command_serial(sc->host.s);
		return err[0] || session_settled(sc->host.s, sc->sent_serial);
	case SCRIPT_STATUS:
		if (script_run_command(&sc->host, cmd, status_line, sc, err, errlen) && !err[0])
			snprintf(err, errlen, "%s failed", script_op_name(cmd->op));
		return true;
	case SCRIPT_SLEEP:
		sc->until_ms = clock_ms() + cmd->ms;
		return false;
	case SCRIPT_WAIT:
		sc->waiter = triggers_wait_begin(sc->host.tg, &cmd->cond, err, errlen);
		return sc->waiter < 0; /* refused: go on rather than hang */
	case SCRIPT_EVENTS:
		begin_events(sc, err, errlen);
		return true;
	case SCRIPT_WINDOW:
		sc->rule_added = triggers_add_rule(sc->host.tg, cmd->rule, err, errlen);
		return true;
	default:
		return true;
	}
}

static bool finished(struct script *sc, const struct script_cmd *cmd)
{
	if (cmd->op == SCRIPT_START || cmd->op == SCRIPT_STOP || cmd->op == SCRIPT_QUIT)
		return session_settled(sc->host.s, sc->sent_serial);
	if (cmd->op == SCRIPT_SLEEP)
		return clock_ms() >= sc->until_ms;
	if (cmd->op == SCRIPT_WAIT && sc->waiter >= 0 && triggers_wait_met(sc->host.tg, sc->waiter)) {
		triggers_wait_end(sc->host.tg, sc->waiter);
		sc->waiter = -1;
		report_info("commands: wait %s: met", cmd->cond.text);
		return true;
	}
	return false;
}

/*
 * A reply line built in parts, cut (with "...") past SCRIPT_REPLY_MAX: a
 * stop of many targets names every folder, which a client reads as one line.
 */
#define SCRIPT_REPLY_MAX 16384
/* A reply line built in parts. */
struct line_buf {
	char buf[SCRIPT_REPLY_MAX];
	size_t n;
};

__attribute__((format(printf, 2, 3))) static void line_add(struct line_buf *l, const char *fmt, ...)
{
	va_list ap;
	int w;

	if (l->n >= sizeof(l->buf) - 1)
		return;
	va_start(ap, fmt);
	w = vsnprintf(l->buf + l->n, sizeof(l->buf) - l->n, fmt, ap);
	va_end(ap);
	if (w < 0)
		return;
	l->n += (size_t)w;
	if (l->n >= sizeof(l->buf) - 1) {
		l->n = sizeof(l->buf) - 1;
		memcpy(l->buf + l->n - 3, "...", 3);
	}
}

/* A command's word for a target's answer: what msprof's line says. */
static const char *answer_word(int status)
{
	switch (status) {
	case PROTO_OK:
		return "success";
	case PROTO_ALREADY_STARTED:
		return "already started";
	case PROTO_NOT_STARTED:
		return "not started";
	case PROTO_NOT_SET_DEVICE:
		return "no device set";
	case PROTO_DISCONNECTED:
		return "disconnected by its server";
	default:
		return "failed";
	}
}

/* A stop that lost its window did not do what the client asked. */
static bool target_ok(const struct session *s, int i, enum script_op op)
{
	const struct window_account *w = session_target_last_window(s, i);

	if (session_target_last_status(s, i) != PROTO_OK)
		return false;
	return op != SCRIPT_STOP || !w || w->number == 0 || w->fate != WINDOW_LOST;
}

/* One target's answer in the reply line's text: "pid 123 success", a stop's folders. */
static void target_text(struct line_buf *l, const struct session *s, const struct script_cmd *cmd, int i)
{
	const struct window_account *w = session_target_last_window(s, i);
	int status = session_target_last_status(s, i);

	line_add(l, "%spid %d %s", l->n ? ", " : "", session_target_pid(s, i), answer_word(status));
	if (cmd->op != SCRIPT_STOP || !w || w->number == 0 || status != PROTO_OK)
		return;
	line_add(l, ", window %s", window_fate_name(w->fate));
	for (int k = 0; k < w->nprof; k++)
		line_add(l, " %s/%s", session_output(s), w->prof[k]);
	if (w->fate != WINDOW_SAVED && w->reason[0])
		line_add(l, " (%s)", w->reason);
}

static cJSON *target_json(const struct session *s, const struct script_cmd *cmd, int i, bool ok)
{
	const struct window_account *w = session_target_last_window(s, i);
	cJSON *j = cJSON_CreateObject(), *folders;
	char path[2 * PATH_MAX];

	if (!j)
		return NULL;
	cJSON_AddNumberToObject(j, "pid", session_target_pid(s, i));
	cJSON_AddBoolToObject(j, "ok", ok);
	cJSON_AddStringToObject(j, "result", answer_word(session_target_last_status(s, i)));
	if (cmd->op == SCRIPT_STOP && w && w->number > 0 && session_target_last_status(s, i) == PROTO_OK) {
		cJSON_AddStringToObject(j, "window", window_fate_name(w->fate));
		folders = cJSON_AddArrayToObject(j, "folders");
		for (int k = 0; folders && k < w->nprof; k++) {
			snprintf(path, sizeof(path), "%s/%s", session_output(s), w->prof[k]);
			cJSON_AddItemToArray(folders, cJSON_CreateString(path));
		}
		if (w->reason[0])
			cJSON_AddStringToObject(j, "reason", w->reason);
	}
	return j;
}

/*
 * What each target the command reached answered, into `l` (text) or `arr`
 * (JSON). Returns how many failed; *reached how many it reached.
 */
static int collect_targets(const struct session *s, const struct script_cmd *cmd,
			   struct line_buf *l, cJSON *arr, int *reached)
{
	int failed = 0;

	*reached = 0;
	for (int i = 0; i < session_target_count(s); i++) {
		bool ok;

		if (!session_target_in_last_command(s, i))
			continue;
		ok = target_ok(s, i, cmd->op);
		(*reached)++;
		failed += !ok;
		if (arr)
			cJSON_AddItemToArray(arr, target_json(s, cmd, i, ok));
		else
			target_text(l, s, cmd, i);
	}
	return failed;
}

/*
 * The one reply line of a start, stop or quit: "ack start" when every target
 * it reached did it, else "error: start failed in N of M targets"; then what
 * each answered (": pid 1 success, pid 2 already started"), or with --json a
 * JSON object ({"targets":[...]}) after a space. One line, so a FIFO or
 * socket script still reads one reply per command.
 */
static void answer_targeted(struct script *sc, const struct script_cmd *cmd, unsigned serial_before)
{
	struct line_buf head = { .n = 0 }, each = { .n = 0 };
	cJSON *obj = cmd->json ? cJSON_CreateObject() : NULL;
	cJSON *arr = obj ? cJSON_AddArrayToObject(obj, "targets") : NULL;
	int reached = 0, failed = 0;
	char *json = NULL;

	if (session_command_serial(sc->host.s) != serial_before)
		failed = collect_targets(sc->host.s, cmd, &each, arr, &reached);
	if (failed)
		line_add(&head, "error: %s failed in %d of %d target%s", script_op_name(cmd->op),
			 failed, reached, reached == 1 ? "" : "s");
	else
		line_add(&head, "ack %s", script_op_name(cmd->op));
	if (obj && (json = cJSON_PrintUnformatted(obj)))
		line_add(&head, " %s", json);
	else if (each.n)
		line_add(&head, ": %s", each.buf);
	cJSON_Delete(obj);
	free(json);
	if (sc->reply)
		sc->reply(sc->reply_ctx, head.buf);
	else if (failed)
		report_error("dynprof: commands: %s", head.buf + strlen("error: "));
}

void script_step(struct script *sc)
{
	while (sc->next < sc->ncmds) {
		struct script_cmd *cmd = &sc->cmds[sc->next];
		char err[512] = "";
		bool done;

		if (!sc->running)
			sc->serial_before = session_command_serial(sc->host.s);
		done = sc->running ? finished(sc, cmd) : begin(sc, cmd, err, sizeof(err));

		if (!done) {
			sc->running = true;
			return;
		}
		sc->running = false;
		sc->next++;
		if (err[0] && sc->reply)
			answer(sc, "error: %s", err);
		else if (err[0])
			report_error("dynprof: commands: %s", err);
		else if (cmd->op == SCRIPT_WINDOW)
			answer_number(sc, "ack window %d", sc->rule_added);
		else if (cmd->op == SCRIPT_START || cmd->op == SCRIPT_STOP || cmd->op == SCRIPT_QUIT)
			answer_targeted(sc, cmd, sc->serial_before);
		else
			answer(sc, "ack %s", script_op_name(cmd->op));
		if (sc->streaming)
			end_commands(sc);
		if (cmd->op == SCRIPT_QUIT && cmd->sel.kind == SEL_ALL)
			return;
	}
}

int script_timeout_ms(const struct script *sc)
{
	int64_t left;

	if (!sc->running || sc->next >= sc->ncmds)
		return -1;
	/* A wait is met by events the console already polls; this is a backstop. */
	if (sc->cmds[sc->next].op == SCRIPT_WAIT)
		return WAIT_CHECK_MS;
	/* A reply waiting for windows' folders: the loop wakes when a collection ends. */
	if (sc->cmds[sc->next].op != SCRIPT_SLEEP)
		return -1;
	left = sc->until_ms - clock_ms();
	return left < 0 ? 0 : (int)left;
}

bool script_idle(const struct script *sc)
{
	return sc->next >= sc->ncmds;
}

bool script_quitting(const struct script *sc)
{
	return sc->running && sc->next < sc->ncmds && sc->cmds[sc->next].op == SCRIPT_QUIT;
}
