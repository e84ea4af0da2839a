/* SPDX-License-Identifier: MIT */
/*
 * The PROF_ folder name, a pure function so it can be unit tested without
 * the agent (tests/unit/test_profdir.c includes this header):
 *
 *     9.x: PROF_<index:6>_<YYYYMMDDhhmmssmmm>_<pid:8><8 letters A..R>
 *     v1:  PROF_<index:6>_<YYYYMMDDhhmmssmmm>_<16 letters A..R>   (no pid)
 *
 * e.g. PROF_000001_20260101120000123_00012345ABCDEFGH and
 * PROF_000001_20261201080012605_JLLLGBKECKQHBABC. The letters come from
 * random bytes the caller supplies; CANN draws them from A to R.
 * Kept static inline: the unit tests link the tool's objects, not the
 * agent's.
 */
#ifndef DYNPROF_SHARED_PROFNAME_H
#define DYNPROF_SHARED_PROFNAME_H

#include <errno.h>
#include <stdio.h>
#include <time.h>

#include "shared/compiler.h"

#define PROFNAME_RAND_LEN 8
#define PROFNAME_LETTERS 18                                       /* 'A'..'R' */
#define PROFNAME_LEN (5 + 6 + 1 + 17 + 1 + 8 + PROFNAME_RAND_LEN) /* 46 */
#define PROFNAME_V1_RAND_LEN 16
#define PROFNAME_V1_LEN (5 + 6 + 1 + 17 + 1 + PROFNAME_V1_RAND_LEN) /* 46 too */

/* One random byte -> one letter 'A'..'R'. */
static inline char profname_letter(unsigned char byte)
{
	return (char)('A' + byte % PROFNAME_LETTERS);
}

/*
 * Format the name into `out`. `tm` is local time, `ms` 0..999. Returns
 * the length, -EINVAL for values that do not fit their fixed widths (the
 * name must keep its shape for the tools that parse it), or -ENAMETOOLONG
 * when `len` is too small.
 */
DP_MUST_CHECK
static inline int profname_format(char *out, size_t len, unsigned index, const struct tm *tm,
				  int ms, long pid, const unsigned char rnd[PROFNAME_RAND_LEN])
{
	char letters[PROFNAME_RAND_LEN + 1];
	int n;

	if (index > 999999 || ms < 0 || ms > 999 || pid < 0 || pid > 99999999 ||
	    tm->tm_year + 1900 < 0 || tm->tm_year + 1900 > 9999)
		return -EINVAL;
	for (int i = 0; i < PROFNAME_RAND_LEN; i++)
		letters[i] = profname_letter(rnd[i]);
	letters[PROFNAME_RAND_LEN] = '\0';
	n = snprintf(out, len, "PROF_%06u_%04d%02d%02d%02d%02d%02d%03d_%08ld%s", index,
		     tm->tm_year + 1900, tm->tm_mon + 1, tm->tm_mday, tm->tm_hour, tm->tm_min,
		     tm->tm_sec, ms, pid, letters);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return n;
}

/* The v1 name: the same, with 16 letters and no pid. Results as profname_format. */
DP_MUST_CHECK
static inline int profname_format_v1(char *out, size_t len, unsigned index, const struct tm *tm,
				     int ms, const unsigned char rnd[PROFNAME_V1_RAND_LEN])
{
	char letters[PROFNAME_V1_RAND_LEN + 1];
	int n;

	if (index > 999999 || ms < 0 || ms > 999 || tm->tm_year + 1900 < 0 || tm->tm_year + 1900 > 9999)
		return -EINVAL;
	for (int i = 0; i < PROFNAME_V1_RAND_LEN; i++)
		letters[i] = profname_letter(rnd[i]);
	letters[PROFNAME_V1_RAND_LEN] = '\0';
	n = snprintf(out, len, "PROF_%06u_%04d%02d%02d%02d%02d%02d%03d_%s", index, tm->tm_year + 1900,
		     tm->tm_mon + 1, tm->tm_mday, tm->tm_hour, tm->tm_min, tm->tm_sec, ms, letters);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return n;
}

#endif /* DYNPROF_SHARED_PROFNAME_H */
