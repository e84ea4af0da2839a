/* SPDX-License-Identifier: MIT */
/*
 * One client connection as both conversations see it: waiting for the
 * next request while watching the shutdown signal and the idle limit,
 * whole-message reads and writes with deadlines, the request count.
 */
#ifndef DYNPROF_AGENT_CONN_H
#define DYNPROF_AGENT_CONN_H

#include <stddef.h>
#include <stdint.h>

#include "agent/config.h"
#include "shared/compiler.h"

/* How long the rest of a message may take once its first byte is readable. */
#define CONN_IO_TIMEOUT_MS 1000
/* CANN's per-connection SO_RCVTIMEO: one idle tick. */
#define CONN_IDLE_TICK_MS 1000

struct agent_conn {
	int fd;
	int wake_fd; /* readable once shutdown began */
	const struct agent_config *cfg;
	int requests;    /* answered on this connection */
	int idle_ticks;  /* 1-s waits while not collecting, this connection */
	int ends_server; /* set by a conversation: as CANN after a short
					   or empty Params, the accept loop ends for good */
};

enum conn_event {
	CONN_READABLE,
	CONN_IDLE,     /* one idle tick more than the limit (cumulative, as CANN) */
	CONN_SHUTDOWN, /* the agent is shutting down */
	CONN_GONE,     /* error or hang-up on the socket */
};

void conn_init(struct agent_conn *c, int fd, int wake_fd, const struct agent_config *cfg);

/*
 * Wait for the next request, in 1-s waits as CANN's receive timeout: each
 * that ends with nothing while no window is open is an idle tick, counted
 * over the whole connection; the tick past cfg->idle_timeout_sec gives
 * CONN_IDLE (0: no limit).
 */
enum conn_event conn_wait(struct agent_conn *c);

/* v1: the idle count restarts at every START_REQ. */
void conn_reset_idle(struct agent_conn *c);

/* Read exactly `len` bytes within `timeout_ms`; fdio_read_full's results. */
int conn_read(struct agent_conn *c, void *buf, size_t len, int timeout_ms, size_t *got) DP_MUST_CHECK;

/* Send a whole message within CONN_IO_TIMEOUT_MS. 0 or a negative errno. */
int conn_send(struct agent_conn *c, const void *buf, size_t len) DP_MUST_CHECK;

/*
 * Before closing: drop requests nobody will answer. A unix socket closed
 * with unread data makes the client's next read fail with ECONNRESET
 * instead of showing the end of the stream after our last message.
 */
void conn_discard_pending(struct agent_conn *c);

/* Log why a read ended the connection (a plain close is no error). */
void conn_log_gone(int rc);

/* Count one answered request; 1 when the per-connection limit is reached (0: none). */
int conn_count_request(struct agent_conn *c) DP_MUST_CHECK;

#endif /* DYNPROF_AGENT_CONN_H */
