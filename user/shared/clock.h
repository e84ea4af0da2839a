/* SPDX-License-Identifier: MIT */
/*
 * The clocks dynprof reads, in the units its callers keep: one place, so
 * every deadline and every timestamp of a run comes from the same clock.
 */
#ifndef DYNPROF_CLOCK_H
#define DYNPROF_CLOCK_H

#include <stdint.h>

/* Milliseconds on CLOCK_MONOTONIC: deadlines (see fdio.h). */
int64_t clock_ms(void);

/* Nanoseconds on CLOCK_MONOTONIC: bpf_ktime_get_ns()'s clock, for comparing with BPF records. */
uint64_t clock_mono_ns(void);

/* Microseconds since 1970 (CLOCK_REALTIME): for records and wall-clock triggers. */
int64_t clock_wall_us(void);

/* Milliseconds left until `deadline` (a clock_ms() value), never negative, at most 10^9. */
int clock_ms_left(int64_t deadline);

/* The sooner of two waits in milliseconds, where -1 is no wait due (poll(2)'s "forever"). */
static inline int64_t clock_sooner(int64_t a, int64_t b)
{
	return a < 0 ? b : b < 0 ? a : a < b ? a : b;
}

#endif /* DYNPROF_CLOCK_H */
