/* SPDX-License-Identifier: MIT */
/*
 * Inside discover (discover.h): what discover.c asks of a back end.
 *   discover.c        the API: checks arguments, picks a back end, then
 *                     calls it only through its struct discover_ops
 *   discover_bpf.c    BPF programs, ring buffer, card map (both modes)
 *   discover_pidfd.c  the fallback: one pidfd per watched pid in an epoll set
 * The back ends build on the leaves watchset.c (watched pids) and pidfd.c,
 * never on discover.c. Not for other modules.
 */
#ifndef DYNPROF_DISCOVER_IMPL_H
#define DYNPROF_DISCOVER_IMPL_H

#include <stdbool.h>
#include <stddef.h>

#include "dynprof/events.h"

/*
 * A back end's state: each back-end file completes this type for itself;
 * discover.c only holds the pointer.
 */
struct discover_be;

/*
 * Calls get arguments discover.c has already checked (non-NULL handles,
 * pid > 0, card numbers in range, callbacks non-NULL where required).
 * Returns as the discover.h functions they serve.
 */
struct discover_ops {
	/* 0 with *be set, or negative errno with `why` saying what failed. */
	int (*open)(struct discover_be **be, bool tracking, char *why, size_t why_len);
	void (*close)(struct discover_be *be);
	/* A pid already watched: 0, nothing changes. */
	int (*watch)(struct discover_be *be, int pid);
	void (*unwatch)(struct discover_be *be, int pid);
	int (*fd)(const struct discover_be *be);
	/* Number of on_exit calls, or negative errno. */
	int (*consume)(struct discover_be *be, void (*on_exit)(void *ctx, int pid), void *ctx);
	/* Number of events delivered, or negative errno. */
	int (*consume_events)(struct discover_be *be,
			      void (*on_event)(void *ctx, const struct dp_event *e), void *ctx);
	/* Only on a tracking handle. */
	int (*add_card)(struct discover_be *be, unsigned major, unsigned minor, int index);
	unsigned long long (*lost)(const struct discover_be *be);
	/* Tracking mode: how card opens are seen, one line, and whether closes are reported; else NULL. */
	const char *(*hook)(const struct discover_be *be, bool *closes);
};

extern const struct discover_ops discover_bpf_ops;   /* discover_bpf.c */
extern const struct discover_ops discover_pidfd_ops; /* discover_pidfd.c */

#endif /* DYNPROF_DISCOVER_IMPL_H */
