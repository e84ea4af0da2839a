// SPDX-License-Identifier: MIT
/* A client connection: waits, limits, whole-message I/O (see conn.h). */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

#include "shared/fdio.h"
#include "agent/conn.h"
#include "agent/log.h"
#include "agent/window.h"

void conn_init(struct agent_conn *c, int fd, int wake_fd, const struct agent_config *cfg)
{
	c->fd = fd;
	c->wake_fd = wake_fd;
	c->cfg = cfg;
	c->requests = 0;
	c->idle_ticks = 0;
}

void conn_reset_idle(struct agent_conn *c)
{
	c->idle_ticks = 0;
}

enum conn_event conn_wait(struct agent_conn *c)
{
	for (;;) {
		struct pollfd pfd[2] = {
			{ .fd = c->wake_fd, .events = POLLIN },
			{ .fd = c->fd, .events = POLLIN },
		};
		/* CANN's 1-s receive timeout: a second that ends in a request is not counted. */
		int n = poll(pfd, 2, c->cfg->idle_timeout_sec ? CONN_IDLE_TICK_MS : -1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return CONN_GONE;
		if (pfd[0].revents)
			return CONN_SHUTDOWN;
		if (pfd[1].revents & POLLIN)
			return CONN_READABLE;
		if (pfd[1].revents)
			return CONN_GONE;
		/* Idle only while not collecting, over the whole connection (never reset in 9.x). */
		if (n == 0 && !window_collecting() && ++c->idle_ticks > c->cfg->idle_timeout_sec)
			return CONN_IDLE;
	}
}

int conn_read(struct agent_conn *c, void *buf, size_t len, int timeout_ms, size_t *got)
{
	return fdio_read_full(c->fd, buf, len, clock_ms() + timeout_ms, got);
}

int conn_send(struct agent_conn *c, const void *buf, size_t len)
{
	return fdio_write_full(c->fd, buf, len, clock_ms() + CONN_IO_TIMEOUT_MS);
}

void conn_discard_pending(struct agent_conn *c)
{
	char buf[4096];

	/* Bounded: a client that keeps sending does not keep us here. */
	for (int i = 0; i < 16; i++)
		if (recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT) <= 0)
			return;
}

void conn_log_gone(int rc)
{
	/* fdio_read_full reports a close before the first byte as ECONNRESET. */
	if (rc == -ECONNRESET)
		agent_log("client closed the connection");
	else
		agent_log("client gone: %s", strerror(-rc));
}

int conn_count_request(struct agent_conn *c)
{
	return ++c->requests >= c->cfg->max_requests && c->cfg->max_requests > 0;
}
