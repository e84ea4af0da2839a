/* SPDX-License-Identifier: MIT */
/*
 * What a target's server allows per connection, and the counts it keeps,
 * as CANN's servers count them (docs/PROTOCOL.md Part 2 sections 2, 3 and 7):
 *
 *  9.x (v2, file socket)  101 START/STOP answered per connection (QUIT not
 *                         counted), then DISCONNECT(7,0), QUIT handling,
 *                         (6,x); 1-s idle ticks while not collecting, over
 *                         the whole connection, disconnect at the 1801st;
 *                         128 accepts per process lifetime.
 *  8.5.0 (v2, abstract)   no limit, no DISCONNECT type.
 *  v1                     101 requests including TEST_REQ (100 commands);
 *                         the same idle count, restarted at every START_REQ;
 *                         128 accepts.
 *
 * Our agent takes DYNPROF_AGENT_MAX_REQUESTS (answered per connection,
 * v1's TEST included) and DYNPROF_AGENT_IDLE_TIMEOUT (idle ticks) from its
 * environment, and DYNPROF_AGENT_FLAVOUR=abstract (8.5.0: no limits); the
 * caller reads them from /proc/<pid>/environ, so tests that scale the
 * limits see dynprof follow them.
 *
 * dynprof counts, per connection, the idle time the server would have
 * counted (connected and not collecting; an over-estimate, since a second
 * that ends in a request is no tick) and reconnects, while not
 * collecting, before either limit is reached. Pure: times are given.
 */
#ifndef DYNPROF_SERVER_LIMITS_H
#define DYNPROF_SERVER_LIMITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dynprof/proto.h"
#include "sock/socklocate.h"

#define SERVER_WINDOW_REQUESTS 2 /* a window's START and STOP must fit in one connection */
#define SERVER_ACCEPTS_WARN 8    /* warn when this few of the server's accepts are left */

struct server_limits {
	int max_commands; /* commands after the handshake; the last one answered is
				   followed by DISCONNECT; 0: no limit */
	int idle_ticks;   /* 1-s idle ticks allowed; the next one disconnects; 0: no limit */
	bool idle_reset_at_start; /* v1: START_REQ restarts the count */
	int max_accepts;          /* connections per process lifetime; 0: no limit */
	bool scaled;              /* set from our agent's environment */
};

/* The agent's variables as read from the target's environ (NULL: unset). */
struct server_limits_env {
	const char *max_requests; /* DYNPROF_AGENT_MAX_REQUESTS */
	const char *idle_timeout; /* DYNPROF_AGENT_IDLE_TIMEOUT */
	const char *flavour;      /* DYNPROF_AGENT_FLAVOUR */
};

void server_limits_for(struct server_limits *out, enum proto_version v, enum sock_flavour f,
		       const struct server_limits_env *env);

/* One connection as the server counts it, and the connections made so far. */
struct server_count {
	int connections; /* made by this run: each used one of the server's accepts */
	int commands;    /* sent after the handshake */
	int64_t idle_ms; /* not collecting, up to mark_ms */
	int64_t mark_ms; /* when idle_ms was last brought up to date */
	bool collecting; /* as last told */
};

/* A fresh connection at `now_ms` (start from a zeroed count). */
void server_count_connected(struct server_count *c, int64_t now_ms);
/* Bring idle_ms up to `now_ms`, then note whether a window is open from now on. */
void server_count_collecting(struct server_count *c, int64_t now_ms, bool collecting);
/* A command sent at `now_ms` (v1 START restarts the idle count). */
void server_count_command(struct server_count *c, const struct server_limits *l, int64_t now_ms,
			  bool is_start);
/* Idle ms the server may have counted by `now_ms`. */
int64_t server_count_idle_ms(const struct server_count *c, int64_t now_ms);

/*
 * When dynprof reconnects for idleness: this many ms of counted idle,
 * a margin before the limit (a quarter of it, at least 0.5 s, at most
 * 60 s); -1 without an idle limit.
 */
int64_t server_idle_reconnect_ms(const struct server_limits *l);

enum server_reconnect {
	SERVER_KEEP = 0,
	SERVER_RECONNECT_REQUESTS, /* a window's START and STOP would not fit */
	SERVER_RECONNECT_IDLE,     /* the idle count nears its limit */
};

/*
 * Does a connection that is not collecting need replacing at `now_ms`?
 * Never while collecting; never a connection that sent nothing when the
 * limit is too small for a window (it would loop); never the last one the
 * server accepts (another connect would find no server); `start_next`: a
 * START is about to be sent, else the idle loop's check.
 */
enum server_reconnect server_needs_reconnect(const struct server_limits *l, const struct server_count *c,
					     int64_t now_ms, bool start_next);

/* Ms until server_needs_reconnect would say IDLE (0: now), -1: never (collecting, no limit, last accept). */
int64_t server_reconnect_due_ms(const struct server_limits *l, const struct server_count *c,
				int64_t now_ms);

enum server_cause {
	SERVER_CAUSE_UNKNOWN,
	SERVER_CAUSE_REQUESTS,
	SERVER_CAUSE_IDLE,
	SERVER_CAUSE_EXIT,
};

/* Why a v2 server sent DISCONNECT, from the counts (exiting: the process is gone). */
enum server_cause server_disconnect_cause(const struct server_limits *l,
					  const struct server_count *c, int64_t now_ms, bool exiting);

/* One line for "Server disconnected, <this>": the cause with its numbers. */
void server_cause_text(enum server_cause cause, const struct server_limits *l,
		       const struct server_count *c, int64_t now_ms, char *buf, size_t len);

#endif /* DYNPROF_SERVER_LIMITS_H */
