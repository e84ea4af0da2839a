/* SPDX-License-Identifier: MIT */
/*
 * Whole-message socket I/O with deadlines, shared by client and agent.
 *
 * Every call takes an absolute CLOCK_MONOTONIC deadline in milliseconds
 * (see clock_ms()); EINTR and partial transfers are handled inside, sends
 * use MSG_NOSIGNAL so a vanished peer is an error, never a SIGPIPE.
 */
#ifndef DYNPROF_FDIO_H
#define DYNPROF_FDIO_H

#include <stddef.h>
#include <stdint.h>

#include "shared/clock.h" /* deadlines are clock_ms() values */
#include "shared/compiler.h"

/*
 * Send all `len` bytes. Returns 0, -ETIMEDOUT when the deadline passed
 * first, or the negative errno of the failure (-EPIPE: the peer closed).
 */
int fdio_write_full(int fd, const void *buf, size_t len, int64_t deadline) DP_MUST_CHECK;

/*
 * Receive exactly `len` bytes. Returns 0; -ETIMEDOUT; -ECONNRESET when the
 * peer closed before sending anything; -EPROTO when it closed part-way
 * (a short message); or another negative errno. `*got`, when given,
 * receives how many bytes did arrive.
 */
int fdio_read_full(int fd, void *buf, size_t len, int64_t deadline, size_t *got) DP_MUST_CHECK;

/* Wait until fd is readable. Returns 1 readable, 0 timeout, negative errno. */
int fdio_wait_readable(int fd, int64_t deadline) DP_MUST_CHECK;

#endif /* DYNPROF_FDIO_H */
