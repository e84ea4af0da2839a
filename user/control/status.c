// SPDX-License-Identifier: MIT
/* The `status` answer (see status.h). */
#include <cjson/cJSON.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "control/status.h"
#include "common/hostpw.h"
#include "report/escape.h"
#include "shared/cards.h"
#include "shared/clock.h"
#include "config/rule.h"
#include "trigger/trigger_view.h"

#define CONTAINER_SHORT 12 /* as `docker ps` shows ids */
#define TEXT_LINE 8192

static const struct status_stats no_stats = { .mode = "attach" };

/*
 * The user's name on this host, else "" (the number is shown). The last
 * answer is kept a second: a status of 1000 targets of one user asked the
 * name service 1000 times (a third of its time, each a read of
 * /etc/passwd, or a network question with LDAP).
 */
#define USER_NAME_KEEP_MS 1000

static void user_name(unsigned uid, char *buf, size_t len)
{
	static char last[256];
	static unsigned last_uid;
	static int64_t last_ms;
	int64_t now = clock_ms();

	if (!last_ms || last_uid != uid || now - last_ms > USER_NAME_KEEP_MS) {
		if (hostpw_name(uid, last, sizeof(last)))
			last[0] = '\0';
		last_uid = uid;
		last_ms = now ? now : 1;
	}
	snprintf(buf, len, "%s", last);
}

static int64_t uptime_s(const struct status_stats *st)
{
	return st->started_ms > 0 ? (clock_ms() - st->started_ms) / 1000 : 0;
}

static const char *window_state(const struct session *s, int i)
{
	return session_target_collecting(s, i) ? "open" : "closed";
}

/* Its last window's first folder (relative to --output), NULL when none. */
static const char *last_folder(const struct session *s, int i)
{
	const struct window_account *a = session_target_last_window(s, i);

	return a && a->number > 0 && a->nprof > 0 ? a->prof[0] : NULL;
}

/* ---- JSON ---- */

static void add_str_or_null(cJSON *o, const char *key, const char *text)
{
	char *safe;

	if (!text || !*text) {
		cJSON_AddNullToObject(o, key);
		return;
	}
	safe = text_escape_dup(text);
	cJSON_AddStringToObject(o, key, safe ? safe : "(out of memory)");
	free(safe);
}

static void add_num_or_null(cJSON *o, const char *key, bool known, double v)
{
	if (known)
		cJSON_AddNumberToObject(o, key, v);
	else
		cJSON_AddNullToObject(o, key);
}

static cJSON *rules_json(const struct triggers *tg, int i)
{
	cJSON *arr = cJSON_CreateArray();
	struct trigger_rule_view v;

	for (int r = 0; arr && r < triggers_rule_count(tg); r++) {
		cJSON *o;

		if (!triggers_rule_view(tg, i, r, &v) || !(o = cJSON_CreateObject()))
			continue;
		cJSON_AddNumberToObject(o, "index", r + 1);
		add_str_or_null(o, "rule", v.text);
		cJSON_AddStringToObject(o, "state", v.state);
		cJSON_AddNumberToObject(o, "windows", v.windows);
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

static cJSON *last_window_json(const struct session *s, int i)
{
	const struct window_account *a = session_target_last_window(s, i);
	cJSON *o, *folders;

	if (!a || a->number <= 0)
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	if (!o)
		return NULL;
	cJSON_AddNumberToObject(o, "number", a->number);
	cJSON_AddStringToObject(o, "fate", window_fate_name(a->fate));
	add_str_or_null(o, "ended", a->ended);
	folders = cJSON_AddArrayToObject(o, "folders");
	for (int k = 0; folders && k < a->nprof && k < WINACCOUNT_PROF_MAX; k++) {
		char *safe = text_escape_dup(a->prof[k]);

		cJSON_AddItemToArray(folders, cJSON_CreateString(safe ? safe : "(out of memory)"));
		free(safe);
	}
	return o;
}

static cJSON *cards_json(uint64_t cards)
{
	cJSON *arr = cJSON_CreateArray();

	for (int c = 0; arr && c < 64; c++)
		if (cards & (1ULL << c))
			cJSON_AddItemToArray(arr, cJSON_CreateNumber(c));
	return arr;
}

static cJSON *target_json(const struct session *s, const struct triggers *tg, int i)
{
	struct session_target_info info;
	const struct session_target_info *t = session_target_info(s, i, &info);
	cJSON *o = cJSON_CreateObject();
	char user[256] = "";

	if (!o)
		return NULL;
	if (t->uid_known)
		user_name(t->uid, user, sizeof(user));
	cJSON_AddNumberToObject(o, "pid", t->pid);
	cJSON_AddNumberToObject(o, "nspid", t->nspid);
	add_str_or_null(o, "container", t->container);
	add_str_or_null(o, "container_id", t->container_id);
	add_str_or_null(o, "container_name", t->container_name);
	add_num_or_null(o, "uid", t->uid_known, t->uid);
	add_str_or_null(o, "user", user);
	cJSON_AddItemToObject(o, "cards", cards_json(t->cards));
	cJSON_AddStringToObject(o, "window", window_state(s, i));
	cJSON_AddNumberToObject(o, "windows", t->windows);
	cJSON_AddItemToObject(o, "rules", rules_json(tg, i));
	cJSON_AddItemToObject(o, "last_window", last_window_json(s, i));
	add_str_or_null(o, "command", t->command);
	cJSON_AddBoolToObject(o, "host_only", t->host_only);
	return o;
}

static cJSON *header_json(const struct session *s, const struct status_stats *st)
{
	cJSON *o = cJSON_CreateObject(), *w, *k;
	struct session_info si;
	int open = 0;

	if (!o)
		return NULL;
	session_info(s, &si);
	for (int i = 0; i < session_target_count(s); i++)
		open += session_target_live(s, i) && session_target_collecting(s, i);
	cJSON_AddNumberToObject(o, "schema", STATUS_SCHEMA);
	cJSON_AddStringToObject(o, "mode", st->mode ? st->mode : "attach");
	cJSON_AddNumberToObject(o, "dynprof_pid", (double)getpid());
	cJSON_AddNumberToObject(o, "uptime_s", (double)uptime_s(st));
	add_str_or_null(o, "output", si.output);
	cJSON_AddBoolToObject(o, "session_window", si.window_open);
	w = cJSON_AddObjectToObject(o, "windows");
	if (w) {
		cJSON_AddNumberToObject(w, "opened", si.windows);
		cJSON_AddNumberToObject(w, "open", open);
		cJSON_AddNumberToObject(w, "saved", si.saved);
		cJSON_AddNumberToObject(w, "incomplete", si.incomplete);
		cJSON_AddNumberToObject(w, "lost", si.lost);
	}
	k = cJSON_AddObjectToObject(o, "kernel");
	if (k) {
		add_num_or_null(k, "events_lost", st->have_lost, (double)st->lost_events);
		add_num_or_null(k, "rescans", st->have_rescans, st->rescans);
		add_num_or_null(k, "model_processes", st->have_model, (double)st->model_procs);
	}
	return o;
}

static void report_json(const struct session *s, const struct triggers *tg,
			const struct status_stats *st, status_line_fn line, void *ctx)
{
	cJSON *o = header_json(s, st), *arr = o ? cJSON_AddArrayToObject(o, "targets") : NULL;
	char *text;
	int live = 0;

	for (int i = 0; arr && i < session_target_count(s); i++) {
		if (!session_target_live(s, i))
			continue;
		live++;
		cJSON_AddItemToArray(arr, target_json(s, tg, i));
	}
	if (o) {
		cJSON *rules = cJSON_AddArrayToObject(o, "rules");

		cJSON_AddNumberToObject(o, "target_count", live);
		for (int r = 0; rules && r < triggers_rule_count(tg); r++) {
			char *safe = text_escape_dup(triggers_rule_text(tg, r));

			cJSON_AddItemToArray(rules, cJSON_CreateString(safe ? safe : "(out of memory)"));
			free(safe);
		}
	}
	text = o ? cJSON_PrintUnformatted(o) : NULL;
	line(ctx, text ? text : "{\"schema\":1,\"error\":\"out of memory\"}");
	free(text);
	cJSON_Delete(o);
}

/* ---- text ---- */

static void say(status_line_fn line, void *ctx, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void say(status_line_fn line, void *ctx, const char *fmt, ...)
{
	char text[TEXT_LINE];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	line(ctx, text);
}

static void number_or_dash(char *buf, size_t len, bool known, unsigned long long v)
{
	if (known)
		snprintf(buf, len, "%llu", v);
	else
		snprintf(buf, len, "-");
}

static void header_text(const struct session *s, const struct status_stats *st, status_line_fn line,
			void *ctx)
{
	char lost[32], rescans[32], model[32], out[PATH_MAX * 4];
	int64_t up = uptime_s(st);
	struct session_info si;
	int open = 0;

	session_info(s, &si);
	for (int i = 0; i < session_target_count(s); i++)
		open += session_target_live(s, i) && session_target_collecting(s, i);
	number_or_dash(lost, sizeof(lost), st->have_lost, st->lost_events);
	number_or_dash(rescans, sizeof(rescans), st->have_rescans, st->rescans);
	number_or_dash(model, sizeof(model), st->have_model, st->model_procs);
	text_escape(si.output, out, sizeof(out));
	say(line, ctx, "mode %s, up %lldh%02lldm%02llds, %d target%s, output %s",
	    st->mode ? st->mode : "attach", (long long)(up / 3600), (long long)(up / 60 % 60),
	    (long long)(up % 60), session_live(s), session_live(s) == 1 ? "" : "s", out);
	say(line, ctx, "windows: %d opened, %d open, %d saved, %d saved incomplete, %d lost",
	    si.windows, open, si.saved, si.incomplete, si.lost);
	say(line, ctx, "kernel: %s events lost, %s rescans, %s processes in the model", lost,
	    rescans, model);
}

/* "1:open,2:armed", or "-" (the rules are listed under the table by number). */
static void rules_text(const struct triggers *tg, int i, char *buf, size_t len)
{
	struct trigger_rule_view v;
	size_t used = 0;

	buf[0] = '\0';
	for (int r = 0; r < triggers_rule_count(tg) && used < len; r++)
		if (triggers_rule_view(tg, i, r, &v))
			used += (size_t)snprintf(buf + used, len - used, "%s%d:%s", used ? "," : "",
						 r + 1, v.state);
	if (!buf[0])
		snprintf(buf, len, "-");
}

static void container_text(const struct session_target_info *t, char *buf, size_t len)
{
	char id[CONTAINER_SHORT + 1];

	if (t->container_name[0] || t->container[0]) {
		text_escape(t->container_name[0] ? t->container_name : t->container, buf, len);
		return;
	}
	snprintf(id, sizeof(id), "%.*s", CONTAINER_SHORT, t->container_id[0] ? t->container_id : "-");
	text_escape(id, buf, len);
}

static void row_text(const struct session *s, const struct triggers *tg, int i, status_line_fn line,
		     void *ctx)
{
	struct session_target_info info;
	const struct session_target_info *t = session_target_info(s, i, &info);
	char cards[192], user[256] = "", container[96 * 4], rules[256], folder[WINACCOUNT_NAME_LEN * 4];
	const char *last = last_folder(s, i);

	cards_mask_text(t->cards, cards, sizeof(cards));
	if (t->uid_known)
		user_name(t->uid, user, sizeof(user));
	if (!user[0] && t->uid_known)
		snprintf(user, sizeof(user), "%u", t->uid);
	container_text(t, container, sizeof(container));
	rules_text(tg, i, rules, sizeof(rules));
	text_escape(last ? last : "-", folder, sizeof(folder));
	say(line, ctx, "%-8d %-8d %-12s %-10s %-8s %-7s %-7d %-14s %s", t->pid, t->nspid, container,
	    user[0] ? user : "-", cards[0] ? cards : "-", window_state(s, i), t->windows, rules, folder);
}

static void report_text(const struct session *s, const struct triggers *tg,
			const struct status_stats *st, status_line_fn line, void *ctx)
{
	header_text(s, st, line, ctx);
	say(line, ctx, "%-8s %-8s %-12s %-10s %-8s %-7s %-7s %-14s %s", "HOST PID", "NS PID",
	    "CONTAINER", "USER", "CARDS", "WINDOW", "WINDOWS", "RULES", "LAST FOLDER");
	for (int i = 0; i < session_target_count(s); i++)
		if (session_target_live(s, i))
			row_text(s, tg, i, line, ctx);
	for (int r = 0; r < triggers_rule_count(tg); r++) {
		char text[sizeof(((struct window_rule *)0)->text) * 4];

		text_escape(triggers_rule_text(tg, r), text, sizeof(text));
		say(line, ctx, "rule %d: %s", r + 1, text);
	}
}

void status_report(const struct session *s, const struct triggers *tg,
		   const struct status_stats *st, bool json, status_line_fn line, void *ctx)
{
	if (!st)
		st = &no_stats;
	if (json)
		report_json(s, tg, st, line, ctx);
	else
		report_text(s, tg, st, line, ctx);
}
