// SPDX-License-Identifier: MIT
/* JSON lines about a run (see events_out.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "shared/clock.h"
#include "report/escape.h"
#include "report/events_out.h"
#include "report/trace_out.h"
#include "common/json_num.h"

/* One sink per run, like standard output itself: a process-wide stream. */
static FILE *sink;
static bool sink_is_stdout;
static events_listener_fn listener;
static void *listener_ctx;

bool events_enabled(void)
{
	return sink || listener;
}

void events_set_listener(events_listener_fn fn, void *ctx)
{
	listener = fn;
	listener_ctx = fn ? ctx : NULL;
}

static int open_path(const char *path, char *err, size_t errlen)
{
	int fd;

	if (!*path) {
		snprintf(err, errlen,
			 "Argument --events: empty path. Please input 'json' or 'json:PATH'.");
		return -EINVAL;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0640);
	if (fd < 0 || !(sink = fdopen(fd, "w"))) {
		snprintf(err, errlen, "Argument --events: cannot write %s: %s.", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -EINVAL;
	}
	return 0;
}

int events_open(const char *spec, char *err, size_t errlen)
{
	if (!strcmp(spec, "json")) {
		sink = stdout;
		sink_is_stdout = true;
		return 0;
	}
	if (!strncmp(spec, "json:", 5))
		return open_path(spec + 5, err, errlen);
	snprintf(err, errlen,
		 "Argument --events: invalid value: %s. Please input 'json' or 'json:PATH'.", spec);
	return -EINVAL;
}

void events_close(void)
{
	if (sink && !sink_is_stdout)
		fclose(sink);
	sink = NULL;
	sink_is_stdout = false;
}

/* Text that may come from a target, escaped (report/escape.h): JSON stays ASCII. */
static void add_text(cJSON *e, const char *key, const char *text)
{
	char *safe = text_escape_dup(text);

	cJSON_AddStringToObject(e, key, safe ? safe : "(out of memory)");
	free(safe);
}

/* Every event starts the same way; NULL when events are off. */
static cJSON *event_new(const char *name, int pid)
{
	cJSON *e;

	if (!events_enabled() || !(e = cJSON_CreateObject()))
		return NULL;
	cJSON_AddStringToObject(e, "event", name);
	json_add_int64(e, "time_us", clock_wall_us());
	if (pid > 0)
		cJSON_AddNumberToObject(e, "pid", pid);
	return e;
}

/* One whole line, flushed at once so a follower sees it as it happens. */
static void event_emit(cJSON *e)
{
	events_listener_fn fn = listener;
	char *text;

	if (!e)
		return;
	text = cJSON_PrintUnformatted(e);
	if (text && sink) {
		fputs(text, sink);
		fputc('\n', sink);
		fflush(sink);
	}
	if (text && fn)
		fn(listener_ctx, text, strlen(text));
	free(text);
	cJSON_Delete(e);
}

void events_target_join(int pid, int nspid, const char *container, const char *command,
			uint64_t cards, bool cards_known, bool host_only)
{
	cJSON *e = event_new("target-join", pid), *list;

	trace_target(pid, container, command);
	if (!e)
		return;
	cJSON_AddNumberToObject(e, "nspid", nspid);
	if (container && container[0])
		add_text(e, "container", container);
	else
		cJSON_AddNullToObject(e, "container");
	if (command)
		add_text(e, "command", command);
	if (cards_known && (list = cJSON_AddArrayToObject(e, "cards")))
		for (int i = 0; i < 64; i++)
			if (cards & (1ULL << i))
				cJSON_AddItemToArray(list, cJSON_CreateNumber(i));
	cJSON_AddBoolToObject(e, "host_only", host_only);
	event_emit(e);
}

/* An event whose one member beyond name, pid and time is a string. */
static void emit_with_text(const char *name, int pid, const char *key, const char *text)
{
	cJSON *e = event_new(name, pid);

	if (e)
		add_text(e, key, text);
	event_emit(e);
}

void events_target_leave(int pid, const char *reason)
{
	emit_with_text("target-leave", pid, "reason", reason);
}

void events_window_open(int pid)
{
	trace_window_open(pid);
	event_emit(event_new("window-open", pid));
}

/* A window-close being built: the event (NULL: events off) and, for the trace, when it ended. */
struct events_close {
	cJSON *e;
	int pid;
	uint64_t ended_ns;
};

struct events_close *events_window_close_begin(int pid)
{
	struct events_close *c;
	cJSON *e = event_new("window-close", pid);

	if (e && !cJSON_AddArrayToObject(e, "prof")) {
		cJSON_Delete(e);
		e = NULL;
	}
	if ((!e && !trace_enabled()) || !(c = calloc(1, sizeof(*c)))) {
		cJSON_Delete(e);
		return NULL;
	}
	*c = (struct events_close){ e, pid, clock_mono_ns() };
	return c;
}

void events_window_close_add(struct events_close *c, const char *prof)
{
	char *safe;

	if (!c || !c->e || !(safe = text_escape_dup(prof)))
		return;
	cJSON_AddItemToArray(cJSON_GetObjectItem(c->e, "prof"), cJSON_CreateString(safe));
	free(safe);
}

void events_window_close_fate(struct events_close *c, const char *fate, const char *reason)
{
	if (!c)
		return;
	trace_window_close(c->pid, c->ended_ns, fate, reason);
	if (!c->e)
		return;
	cJSON_AddStringToObject(c->e, "fate", fate);
	if (reason && *reason)
		add_text(c->e, "reason", reason);
}

void events_window_close_host(struct events_close *c, cJSON *host)
{
	/* No events wanted (a trace only): nothing holds it. */
	if (!c || !c->e || !host || !cJSON_AddItemToObject(c->e, "host", host))
		cJSON_Delete(host);
}

void events_window_close_end(struct events_close *c)
{
	if (!c)
		return;
	event_emit(c->e);
	free(c);
}

/* A trigger event's common part: which rule, which edge, what condition. */
static cJSON *trigger_event(int pid, int rule, const char *edge, const char *condition)
{
	cJSON *e = event_new("trigger", pid);

	if (!e)
		return NULL;
	cJSON_AddNumberToObject(e, "rule", rule);
	cJSON_AddStringToObject(e, "edge", edge);
	add_text(e, "condition", condition);
	return e;
}

void events_trigger(int pid, int rule, const char *edge, const char *condition, bool has_count,
		    uint64_t count)
{
	cJSON *e = trigger_event(pid, rule, edge, condition);

	trace_trigger(pid, rule, edge, condition, has_count, count, false, 0, 0);
	if (!e)
		return;
	if (has_count)
		json_add_uint64(e, "count", count);
	event_emit(e);
}

void events_trigger_measured(int pid, int rule, const char *edge, const char *condition,
			     uint64_t value_ns, uint64_t typical_ns)
{
	cJSON *e = trigger_event(pid, rule, edge, condition);

	trace_trigger(pid, rule, edge, condition, false, 0, true, value_ns, typical_ns);
	if (!e)
		return;
	json_add_uint64(e, "measured_us", value_ns / 1000);
	json_add_uint64(e, "typical_us", typical_ns / 1000);
	event_emit(e);
}

void events_error(int pid, const char *message)
{
	trace_instant(pid, "error", "message", message);
	emit_with_text("error", pid, "message", message);
}
