/* SPDX-License-Identifier: MIT */
/*
 * A minimal unit-test harness: each test binary runs its TEST functions and
 * prints one line per test, "PASS <name>" or "FAIL <name>: <why>", which
 * tests/run.sh counts. Pure functions only; everything else is tested with
 * real processes in tests/integration/.
 */
#ifndef DYNPROF_UNIT_H
#define DYNPROF_UNIT_H

#include <stdio.h>
#include <string.h>

static int unit_failed_current;
static int unit_failures;

#define CHECK(cond)                                                                   \
	do {                                                                          \
		if (!(cond)) {                                                        \
			printf("  %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond);    \
			unit_failed_current = 1;                                      \
		}                                                                     \
	} while (0)

#define CHECK_INT(a, b)                                                               \
	do {                                                                          \
		long long _a = (long long)(a), _b = (long long)(b);                   \
		if (_a != _b) {                                                       \
			printf("  %s:%d: %s == %lld, expected %lld\n", __FILE__, __LINE__, #a, \
			       _a, _b);                                               \
			unit_failed_current = 1;                                      \
		}                                                                     \
	} while (0)

#define CHECK_STR(a, b)                                                               \
	do {                                                                          \
		const char *_a = (a), *_b = (b);                                      \
		if (!_a || strcmp(_a, _b)) {                                          \
			printf("  %s:%d: %s == \"%s\", expected \"%s\"\n", __FILE__, __LINE__, \
			       #a, _a ? _a : "(null)", _b);                           \
			unit_failed_current = 1;                                      \
		}                                                                     \
	} while (0)

#define RUN(test)                                                                     \
	do {                                                                          \
		unit_failed_current = 0;                                              \
		test();                                                               \
		printf("%s %s\n", unit_failed_current ? "FAIL" : "PASS", #test);     \
		unit_failures += unit_failed_current;                                 \
	} while (0)

#define UNIT_EXIT() return unit_failures ? 1 : 0

#endif /* DYNPROF_UNIT_H */
