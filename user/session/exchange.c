// SPDX-License-Identifier: MIT
/* Parallel request/reply exchanges (see exchange.h). */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "shared/clock.h"
#include "session/exchange.h"

#define EXCHANGE_PENDING 1

void exchange_init(struct exchange *x, int fd, const void *out, size_t out_len, size_t in_len,
		   int64_t deadline)
{
	x->fd = fd;
	memcpy(x->out, out, out_len);
	x->out_len = out_len;
	x->out_done = 0;
	x->in_len = in_len;
	x->in_done = 0;
	x->deadline = deadline;
	x->result = EXCHANGE_PENDING;
	x->finished_ms = 0;
}

static void finish(struct exchange *x, int result)
{
	x->result = result;
	x->finished_ms = clock_ms();
	x->finished_wall_us = clock_wall_us();
}

static void try_send(struct exchange *x)
{
	while (x->out_done < x->out_len) {
		ssize_t n = send(x->fd, x->out + x->out_done, x->out_len - x->out_done,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n > 0) {
			x->out_done += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		finish(x, n < 0 ? -errno : -EPIPE);
		return;
	}
	if (x->in_len == 0)
		finish(x, 0);
}

static void try_recv(struct exchange *x)
{
	while (x->in_done < x->in_len) {
		ssize_t n = recv(x->fd, x->in + x->in_done, x->in_len - x->in_done, MSG_DONTWAIT);

		if (n > 0) {
			x->in_done += (size_t)n;
			continue;
		}
		if (n == 0) {
			finish(x, x->in_done ? -EPROTO : -ECONNRESET);
			return;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			finish(x, -errno);
		return;
	}
	finish(x, 0);
}

/* Advance one exchange as far as it goes without blocking. */
static void step(struct exchange *x)
{
	if (x->result != EXCHANGE_PENDING)
		return; /* finished already (exchange_begin) */
	if (x->out_done < x->out_len)
		try_send(x);
	if (x->result == EXCHANGE_PENDING && x->out_done == x->out_len)
		try_recv(x);
	if (x->result == EXCHANGE_PENDING && clock_ms() >= x->deadline)
		finish(x, -ETIMEDOUT);
}

void exchange_begin(struct exchange *x)
{
	if (x->result == EXCHANGE_PENDING)
		step(x);
}

/* Fill pollfds for the pending exchanges; returns how many, and the nearest deadline. */
static int collect(struct exchange **xs, int n, struct pollfd *pfds, int *map, int64_t *nearest)
{
	int k = 0;

	*nearest = INT64_MAX;
	for (int i = 0; i < n; i++) {
		struct exchange *x = xs[i];

		if (x->result != EXCHANGE_PENDING)
			continue;
		pfds[k].fd = x->fd;
		pfds[k].events = x->out_done < x->out_len ? POLLOUT : POLLIN;
		pfds[k].revents = 0;
		map[k++] = i;
		if (x->deadline < *nearest)
			*nearest = x->deadline;
	}
	return k;
}

bool exchange_pending(const struct exchange *x)
{
	return x->result == EXCHANGE_PENDING;
}

int exchange_pollfd(const struct exchange *x, struct pollfd *p)
{
	if (x->result != EXCHANGE_PENDING)
		return 0;
	*p = (struct pollfd){ .fd = x->fd, .events = x->out_done < x->out_len ? POLLOUT : POLLIN };
	return 1;
}

void exchange_step(struct exchange *x)
{
	step(x);
}

void exchange_abandon(struct exchange *x, int result)
{
	if (x->result == EXCHANGE_PENDING)
		finish(x, result);
}

void exchange_run(struct exchange **xs, int n)
{
	struct pollfd *pfds = calloc((size_t)n + 1, sizeof(*pfds));
	int *map = calloc((size_t)n + 1, sizeof(*map));

	if (!pfds || !map) {
		for (int i = 0; i < n; i++)
			finish(xs[i], -ENOMEM);
		goto out;
	}
	for (int i = 0; i < n; i++)
		step(xs[i]);
	for (;;) {
		int64_t nearest;
		int k = collect(xs, n, pfds, map, &nearest);

		if (k == 0)
			break;
		if (poll(pfds, (nfds_t)k, clock_ms_left(nearest)) < 0 && errno != EINTR)
			break;
		for (int j = 0; j < k; j++)
			step(xs[map[j]]);
	}
out:
	for (int i = 0; i < n; i++)
		if (xs[i]->result == EXCHANGE_PENDING)
			finish(xs[i], -EIO);
	free(pfds);
	free(map);
}
