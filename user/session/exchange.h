/* SPDX-License-Identifier: MIT */
/*
 * Parallel request/reply exchanges: send one message to each of several
 * targets and receive one fixed-size reply from each, all at once in one
 * poll loop, each under its own deadline. A slow or hung target delays no
 * other: it fails alone with -ETIMEDOUT when its deadline passes.
 */
#ifndef DYNPROF_EXCHANGE_H
#define DYNPROF_EXCHANGE_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dynprof/proto.h"

struct exchange {
	int fd; /* non-blocking, connected */
	unsigned char out[PROTO_MAX_WIRE_SIZE];
	size_t out_len, out_done;
	unsigned char in[PROTO_MAX_WIRE_SIZE];
	size_t in_len, in_done; /* in_len 0: send only */
	int64_t deadline;       /* clock_ms() based */
	/*
	 * 0 done; -ETIMEDOUT; -ECONNRESET closed before replying; -EPROTO
	 * closed part-way through the reply; -EPIPE closed while sending; or
	 * another negative errno.
	 */
	int result;
	int64_t finished_ms;      /* when it completed or failed */
	int64_t finished_wall_us; /* the same on the wall clock, for records */
};

/* Set up an exchange: `out` is copied; the reply will be `in_len` bytes. */
void exchange_init(struct exchange *x, int fd, const void *out, size_t out_len, size_t in_len,
		   int64_t deadline);

/*
 * Advance one exchange as far as it goes without waiting (its message
 * sent, as a rule); exchange_run brings it home later.
 */
void exchange_begin(struct exchange *x);

/* Run all `n` exchanges to completion or failure. */
void exchange_run(struct exchange **xs, int n);

/*
 * One exchange advanced by the caller's loop instead of exchange_run:
 * whether it is still under way; its pollfd (1, or 0 when it is not);
 * one step as far as it goes without blocking (its deadline looked at
 * too); ended from outside with `result` (its fd closed under it).
 */
bool exchange_pending(const struct exchange *x);
int exchange_pollfd(const struct exchange *x, struct pollfd *p);
void exchange_step(struct exchange *x);
void exchange_abandon(struct exchange *x, int result);

#endif /* DYNPROF_EXCHANGE_H */
