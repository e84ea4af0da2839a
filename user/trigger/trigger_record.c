// SPDX-License-Identifier: MIT
/*
 * The record of every window a rule opened: one JSON line per window in
 * <output>/<dynprof pid>_dynprof_windows, written when it closes, with
 * when each edge fired and when the target acknowledged it.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "common/json_num.h"
#include "results/output.h"
#include "report/report.h"
#include "results/winaccount.h"
#include "trigger/triggers_impl.h"

/* A window's line waiting for its fate: its folders are still being brought out. */
struct pending_line {
	cJSON *w; /* the rule's part, built when the window closed */
	int i;    /* the target */
};

struct trigger_record {
	FILE *f; /* <output>/<pid>_dynprof_windows (JSON lines) */
	struct pending_line *pending;
	int npending, cap;
};

/* Opened at the first window closed (tried again at the next when it failed). */
static struct trigger_record *open_record(struct triggers *tg)
{
	char path[PATH_MAX + 64], name[64];
	int fd;

	if (!tg->record && !(tg->record = calloc(1, sizeof(*tg->record))))
		return NULL;
	if (tg->record->f)
		return tg->record;
	snprintf(path, sizeof(path), "%s/%d_dynprof_windows", session_output(tg->s), (int)getpid());
	snprintf(name, sizeof(name), "%d_dynprof_windows", (int)getpid());
	fd = output_open_file(session_output(tg->s), name);
	tg->record->f = fd < 0 ? NULL : fdopen(fd, "a");
	if (!tg->record->f) {
		report_warning("dynprof: cannot write the window record %s: %s", path,
			       strerror(fd < 0 ? -fd : errno));
		if (fd >= 0)
			close(fd);
	}
	return tg->record->f ? tg->record : NULL;
}

/* Who the window was in: a container's pid 1 is told apart by its host pid, container, command. */
static void add_origin(cJSON *w, const struct session_target_info *t)
{
	winaccount_origin_to_json(w, t->nspid, t->container, t->command);
}

static void print_line(struct trigger_record *rec, cJSON *w)
{
	char *text = cJSON_PrintUnformatted(w);

	if (text && rec->f) {
		fprintf(rec->f, "%s\n", text);
		fflush(rec->f);
	}
	free(text);
}

/* The session's part (folders, fate; who it was in), then the line. */
static void finish_line(struct triggers *tg, struct trigger_record *rec, cJSON *w, int i)
{
	struct session_target_info info;

	/* How the session saw the window end: its folders, its fate. */
	if (session_target_last_window(tg->s, i)->number > 0)
		winaccount_to_json(session_target_last_window(tg->s, i), session_output(tg->s), w);
	add_origin(w, session_target_info(tg->s, i, &info)); /* after the edges: readers of the older keys keep their order */
	print_line(rec, w);
	cJSON_Delete(w);
}

static bool waits_before(const struct trigger_record *rec, int end, int i)
{
	for (int k = 0; k < end; k++)
		if (rec->pending[k].i == i)
			return true;
	return false;
}

void trigger_record_flush(struct triggers *tg, bool all)
{
	struct trigger_record *rec = tg->record;
	int kept = 0;

	if (!rec)
		return;
	for (int k = 0; k < rec->npending; k++) {
		struct pending_line *p = &rec->pending[k];

		/* In order per target: a later line waits behind an earlier one. */
		if (all || (session_target_settled(tg->s, p->i) && !waits_before(rec, k, p->i)))
			finish_line(tg, rec, p->w, p->i);
		else
			rec->pending[kept++] = *p;
	}
	rec->npending = kept;
}

static bool defer(struct trigger_record *rec, cJSON *w, int i)
{
	if (rec->npending == rec->cap) {
		int cap = rec->cap ? 2 * rec->cap : 8;
		struct pending_line *grown = realloc(rec->pending, (size_t)cap * sizeof(*grown));

		if (!grown)
			return false;
		rec->pending = grown;
		rec->cap = cap;
	}
	rec->pending[rec->npending++] = (struct pending_line){ w, i };
	return true;
}

void trigger_record_close(struct trigger_record *rec)
{
	if (!rec)
		return;
	for (int k = 0; k < rec->npending; k++)
		cJSON_Delete(rec->pending[k].w);
	free(rec->pending);
	if (rec->f)
		fclose(rec->f);
	free(rec);
}

static void add_edge(cJSON *w, const char *name, const struct condition *c, int64_t fired_us, int64_t ack_us)
{
	cJSON *e = cJSON_AddObjectToObject(w, name);

	if (!e)
		return;
	cJSON_AddStringToObject(e, "condition", c->kind == COND_NONE ? "exit or quit" : c->text);
	json_add_int64(e, "fired_us", fired_us);
	json_add_int64(e, "ack_us", ack_us);
}

/* call: starts: the count that fired and the count when the target had acknowledged. */
static void add_counts(cJSON *edge, uint64_t fired, uint64_t acked)
{
	if (!edge)
		return;
	json_add_uint64(edge, "count", fired);
	json_add_uint64(edge, "ack_count", acked);
}

/* slow:, gap:, stall: edges: what was measured (duration, gap, stall) and the typical value then. */
static void add_measure(cJSON *edge, const struct condition *c, uint64_t value_ns, uint64_t typical_ns)
{
	if (!edge || (c->kind != COND_SLOW && c->kind != COND_GAP && c->kind != COND_STALL))
		return;
	json_add_uint64(edge, "measured_us", value_ns / 1000);
	json_add_uint64(edge, "typical_us", typical_ns / 1000);
}

/* One JSON line per closed window: which rule, when each edge fired and was acknowledged. */
void trigger_record_window(struct triggers *tg, int i, int r)
{
	const struct rule_run *run = run_of(tg, i, r);
	int64_t stop_ack_us = run->stop_ack_us;
	struct trigger_record *rec = open_record(tg);
	cJSON *w;

	if (!rec || !(w = cJSON_CreateObject()))
		return;
	cJSON_AddNumberToObject(w, "pid", target_pid(tg, i));
	cJSON_AddNumberToObject(w, "rule", r + 1);
	cJSON_AddNumberToObject(w, "window", run->windows);
	add_edge(w, "start", &tg->rules[r].start, run->start_fired_us, run->start_ack_us);
	if (tg->rules[r].start.kind == COND_CALL)
		add_counts(cJSON_GetObjectItem(w, "start"), run->start_count, run->ack_count);
	add_measure(cJSON_GetObjectItem(w, "start"), &tg->rules[r].start, run->start_value_ns,
		    run->start_typical_ns);
	add_edge(w, "stop", &tg->rules[r].stop,
		 run->stop_fired_us ? run->stop_fired_us : stop_ack_us, stop_ack_us);
	if (run->stop_value_ns) /* not for a window that ended by exit or quit first */
		add_measure(cJSON_GetObjectItem(w, "stop"), &tg->rules[r].stop, run->stop_value_ns,
			    run->stop_typical_ns);
	/* Its folders still being brought out (or a line before it waiting): written once they are. */
	if ((!session_target_settled(tg->s, i) || waits_before(rec, rec->npending, i)) &&
	    defer(rec, w, i))
		return;
	finish_line(tg, rec, w, i);
}
