/* SPDX-License-Identifier: MIT */
/*
 * The clocks a window records at its start and end, so data can later be
 * placed on one timeline: wall time, CLOCK_MONOTONIC_RAW, and the CPU's
 * counter (cntvct on aarch64; the TSC on x86_64, where CANN has none).
 */
#ifndef DYNPROF_SHARED_CLOCKINFO_H
#define DYNPROF_SHARED_CLOCKINFO_H

#include <stdint.h>
#include <time.h>

#include "shared/compiler.h"

struct clock_stamp {
	struct timespec real; /* CLOCK_REALTIME */
	uint64_t mono_raw_ns; /* CLOCK_MONOTONIC_RAW */
	uint64_t cntvct;      /* counter read just before the raw clock */
	uint64_t cntvct_diff; /* counter ticks the raw clock read took */
};

void clock_stamp_take(struct clock_stamp *s);

/*
 * start_info / end_info text: `edge` is "Begin" or "End", giving the
 * fields collectionDate<edge>, collectionTime<edge> (µs since the epoch,
 * a string as CANN writes it) and clockMonotonicRaw (ns, a string).
 * Returns a malloc'd string or NULL.
 */
char *clock_stamp_info_json(const struct clock_stamp *s, const char *edge);

/* host_start.log text. Returns the length or a negative errno. */
int clock_stamp_host_log(const struct clock_stamp *s, char *buf, size_t len) DP_MUST_CHECK;

#endif /* DYNPROF_SHARED_CLOCKINFO_H */
