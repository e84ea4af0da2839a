// SPDX-License-Identifier: MIT
/* The clocks dynprof reads (see user/shared/clock.h). */
#include <time.h>

#include "shared/clock.h"

int64_t clock_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

uint64_t clock_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int64_t clock_wall_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int clock_ms_left(int64_t deadline)
{
	int64_t left = deadline - clock_ms();

	if (left < 0)
		return 0;
	return left > 1000000000 ? 1000000000 : (int)left;
}
