// SPDX-License-Identifier: MIT
/* Clock stamps for start_info, end_info and host_start.log (see clockinfo.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "shared/clockinfo.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

/* The CPU's free-running counter; 0 where there is none we can read. */
static uint64_t read_counter(void)
{
#if defined(__aarch64__)
	uint64_t v;

	__asm__ __volatile__("isb; mrs %0, cntvct_el0" : "=r"(v) : : "memory");
	return v;
#elif defined(__x86_64__) || defined(__i386__)
	return __rdtsc();
#else
	return 0;
#endif
}

static uint64_t ts_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec;
}

void clock_stamp_take(struct clock_stamp *s)
{
	struct timespec raw;
	uint64_t after;

	clock_gettime(CLOCK_REALTIME, &s->real);
	/* Bracket the raw clock by two counter reads: the pair ties the clocks. */
	s->cntvct = read_counter();
	clock_gettime(CLOCK_MONOTONIC_RAW, &raw);
	after = read_counter();
	s->mono_raw_ns = ts_ns(&raw);
	s->cntvct_diff = after - s->cntvct;
}

/* Local time with microseconds, "2026-01-01 12:00:00.123456". */
static void format_date(const struct timespec *ts, char *buf, size_t len)
{
	struct tm tm;
	char day[32];

	localtime_r(&ts->tv_sec, &tm);
	strftime(day, sizeof(day), "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(buf, len, "%s.%06ld", day, ts->tv_nsec / 1000);
}

static int add_text(cJSON *obj, const char *prefix, const char *edge, const char *value)
{
	char key[64];

	snprintf(key, sizeof(key), "%s%s", prefix, edge);
	return cJSON_AddStringToObject(obj, key, value) ? 0 : -ENOMEM;
}

char *clock_stamp_info_json(const struct clock_stamp *s, const char *edge)
{
	char date[64], usec[32], raw[32];
	cJSON *obj = cJSON_CreateObject();
	char *text = NULL;

	if (!obj)
		return NULL;
	format_date(&s->real, date, sizeof(date));
	snprintf(usec, sizeof(usec), "%" PRIu64, ts_ns(&s->real) / 1000);
	snprintf(raw, sizeof(raw), "%" PRIu64, s->mono_raw_ns);
	if (!add_text(obj, "collectionDate", edge, date) && !add_text(obj, "collectionTime", edge, usec) &&
	    cJSON_AddStringToObject(obj, "clockMonotonicRaw", raw))
		text = cJSON_PrintUnformatted(obj); /* msprof reads the first line only */
	cJSON_Delete(obj);
	return text;
}

int clock_stamp_host_log(const struct clock_stamp *s, char *buf, size_t len)
{
	int n = snprintf(buf, len,
			 "[Host]\nclock_monotonic_raw: %" PRIu64 "\ncntvct: %" PRIu64
			 "\ncntvct_diff: %" PRIu64 "\n",
			 s->mono_raw_ns, s->cntvct, s->cntvct_diff);

	return n < 0 || (size_t)n >= len ? -ENOSPC : n;
}
