// SPDX-License-Identifier: MIT
/* A target's limits and the counts its server keeps (see server_limits.h). */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "shared/decimal.h"
#include "session/server_limits.h"

#define IDLE_MARGIN_MIN_MS 500
#define IDLE_MARGIN_MAX_MS 60000

/* A positive number from the agent's environment, else `def` (as the agent reads it). */
static int env_positive(const char *text, int def, bool *scaled)
{
	int v;

	if (!text || decimal_int(text, 1, INT_MAX, &v))
		return def;
	*scaled = true;
	return v;
}

void server_limits_for(struct server_limits *out, enum proto_version v, enum sock_flavour f,
		       const struct server_limits_env *env)
{
	int answered;

	memset(out, 0, sizeof(*out));
	if (v == PROTO_V2 && (f == SOCK_FLAVOUR_ABSTRACT ||
			      (env && env->flavour && !strcmp(env->flavour, "abstract")))) {
		out->scaled = f != SOCK_FLAVOUR_ABSTRACT;
		return; /* 8.5.0: no limit at all */
	}
	answered = env_positive(env ? env->max_requests : NULL,
				v == PROTO_V1 ? PROTO_V1_MAX_REQUESTS : PROTO_V2_MAX_REQUESTS,
				&out->scaled);
	/* v1 counts the TEST_REQ handshake among its requests. */
	out->max_commands = v == PROTO_V1 ? answered - 1 : answered;
	if (out->max_commands < 1)
		out->max_commands = 1; /* the handshake alone uses them up: the first command ends it */
	out->idle_ticks =
		env_positive(env ? env->idle_timeout : NULL, PROTO_IDLE_LIMIT_TICKS, &out->scaled);
	out->idle_reset_at_start = v == PROTO_V1;
	out->max_accepts = PROTO_MAX_ACCEPTS;
}

void server_count_connected(struct server_count *c, int64_t now_ms)
{
	*c = (struct server_count){ .connections = c->connections + 1, .mark_ms = now_ms };
}

/* The server takes no connection after this one. */
static bool last_accept(const struct server_limits *l, const struct server_count *c)
{
	return l->max_accepts && c->connections >= l->max_accepts;
}

void server_count_collecting(struct server_count *c, int64_t now_ms, bool collecting)
{
	c->idle_ms = server_count_idle_ms(c, now_ms);
	c->mark_ms = now_ms;
	c->collecting = collecting;
}

void server_count_command(struct server_count *c, const struct server_limits *l, int64_t now_ms,
			  bool is_start)
{
	c->commands++;
	if (is_start && l->idle_reset_at_start) {
		c->idle_ms = 0;
		c->mark_ms = now_ms;
	}
}

int64_t server_count_idle_ms(const struct server_count *c, int64_t now_ms)
{
	if (c->collecting || now_ms < c->mark_ms)
		return c->idle_ms;
	return c->idle_ms + (now_ms - c->mark_ms);
}

int64_t server_idle_reconnect_ms(const struct server_limits *l)
{
	int64_t limit = (int64_t)l->idle_ticks * 1000, margin = limit / 4;

	if (!l->idle_ticks)
		return -1;
	if (margin < IDLE_MARGIN_MIN_MS)
		margin = IDLE_MARGIN_MIN_MS;
	if (margin > IDLE_MARGIN_MAX_MS)
		margin = IDLE_MARGIN_MAX_MS;
	/* The server disconnects at tick idle_ticks + 1: even a 1-tick limit leaves 0.5 s. */
	return limit - margin;
}

enum server_reconnect server_needs_reconnect(const struct server_limits *l,
					     const struct server_count *c, int64_t now_ms, bool start_next)
{
	int64_t idle_at = server_idle_reconnect_ms(l);

	if (c->collecting || last_accept(l, c))
		return SERVER_KEEP;
	/* A window's START and STOP must both be answered before the limit's DISCONNECT. */
	if (l->max_commands && c->commands > 0 && c->commands + SERVER_WINDOW_REQUESTS >= l->max_commands)
		return SERVER_RECONNECT_REQUESTS;
	/* v1 restarts its count at START: the START about to go needs no fresh connection. */
	if (start_next && l->idle_reset_at_start)
		return SERVER_KEEP;
	if (idle_at >= 0 && server_count_idle_ms(c, now_ms) >= idle_at)
		return SERVER_RECONNECT_IDLE;
	return SERVER_KEEP;
}

int64_t server_reconnect_due_ms(const struct server_limits *l, const struct server_count *c, int64_t now_ms)
{
	int64_t idle_at = server_idle_reconnect_ms(l), idle;

	if (c->collecting || idle_at < 0 || last_accept(l, c))
		return -1;
	idle = server_count_idle_ms(c, now_ms);
	return idle >= idle_at ? 0 : idle_at - idle;
}

enum server_cause server_disconnect_cause(const struct server_limits *l,
					  const struct server_count *c, int64_t now_ms, bool exiting)
{
	if (l->max_commands && c->commands >= l->max_commands)
		return SERVER_CAUSE_REQUESTS;
	if (exiting)
		return SERVER_CAUSE_EXIT;
	if (l->idle_ticks && server_count_idle_ms(c, now_ms) >= (int64_t)l->idle_ticks * 1000)
		return SERVER_CAUSE_IDLE;
	return SERVER_CAUSE_UNKNOWN;
}

void server_cause_text(enum server_cause cause, const struct server_limits *l,
		       const struct server_count *c, int64_t now_ms, char *buf, size_t len)
{
	switch (cause) {
	case SERVER_CAUSE_REQUESTS:
		snprintf(buf, len, "request limit reached (the server answers %d requests per connection)",
			 l->max_commands);
		break;
	case SERVER_CAUSE_IDLE:
		snprintf(buf, len,
			 "idle limit reached (%lld s idle on this connection, the server allows %d)",
			 (long long)(server_count_idle_ms(c, now_ms) / 1000), l->idle_ticks);
		break;
	case SERVER_CAUSE_EXIT:
		snprintf(buf, len, "the server process is exiting");
		break;
	default:
		snprintf(buf, len,
			 "reason unknown (no limit was reached; requests sent: %d, idle: %lld s)",
			 c->commands, (long long)(server_count_idle_ms(c, now_ms) / 1000));
	}
}
