/* SPDX-License-Identifier: MIT */
/*
 * A minimal unit-test harness: each test binary runs its tests and prints
 * one line per test, "PASS <name>" or "FAIL <name>: <why>", which
 * tests/run.sh counts against the number the binary declares, so a binary
 * that stops early (exit, crash, hang) fails the run instead of losing its
 * remaining tests quietly.
 *
 * Writing tests:
 *
 *   TEST(name) { CHECK(...); REQUIRE(setup_ok); ... }
 *   ...
 *   UNIT_MAIN()
 *
 * TEST registers the function in the binary's table (in source order);
 * UNIT_MAIN defines main, which runs the table with stdout line-buffered,
 * SIGPIPE ignored and a time limit per test (UNIT_TIME_LIMIT_S, a hang is
 * a FAIL naming the test). "--count" prints how many tests are declared,
 * "--list" their names; neither runs any.
 *
 * REQUIRE(cond) is CHECK that also ends the test: use it for setup that
 * can fail (mkdtemp, socketpair, fork, open...), so the test FAILs instead
 * of returning without a word.
 */
#ifndef DYNPROF_UNIT_H
#define DYNPROF_UNIT_H

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define UNIT_MAX_TESTS 512
#define UNIT_TIME_LIMIT_S 30
/* Static helpers of a header: a binary need not use each one. */
#define UNIT_UNUSED __attribute__((unused))

UNIT_UNUSED static int unit_failed_current;
UNIT_UNUSED static int unit_failures;

/* The table TEST fills before main. */
struct unit_test {
	void (*fn)(void);
	const char *name;
	int line;
};
UNIT_UNUSED static struct unit_test unit_tests[UNIT_MAX_TESTS];
UNIT_UNUSED static int unit_ntests;
UNIT_UNUSED static int unit_overflow;

#define CHECK(cond)                                                                       \
	do {                                                                              \
		if (!(cond)) {                                                            \
			printf("  %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
			unit_failed_current = 1;                                          \
		}                                                                         \
	} while (0)

/* CHECK, then end the test when it failed (errno, if any, is printed). */
#define REQUIRE(cond)                                                                           \
	do {                                                                                    \
		int _e = errno;                                                                 \
		if (!(cond)) {                                                                  \
			printf("  %s:%d: REQUIRE(%s) failed (errno: %s)\n", __FILE__, __LINE__, \
			       #cond, _e ? strerror(_e) : "none");                              \
			unit_failed_current = 1;                                                \
			return;                                                                 \
		}                                                                               \
	} while (0)

#define CHECK_INT(a, b)                                                                                 \
	do {                                                                                            \
		long long _a = (long long)(a), _b = (long long)(b);                                     \
		if (_a != _b) {                                                                         \
			printf("  %s:%d: %s == %lld, expected %lld\n", __FILE__, __LINE__, #a, _a, _b); \
			unit_failed_current = 1;                                                        \
		}                                                                                       \
	} while (0)

#define CHECK_STR(a, b)                                                                            \
	do {                                                                                       \
		const char *_a = (a), *_b = (b);                                                   \
		if (!_a || strcmp(_a, _b)) {                                                       \
			printf("  %s:%d: %s == \"%s\", expected \"%s\"\n", __FILE__, __LINE__, #a, \
			       _a ? _a : "(null)", _b);                                            \
			unit_failed_current = 1;                                                   \
		}                                                                                  \
	} while (0)

UNIT_UNUSED static void unit_register(void (*fn)(void), const char *name, int line)
{
	int i;

	if (unit_ntests == UNIT_MAX_TESTS) {
		unit_overflow = 1;
		return;
	}
	/* Constructors run in no promised order: keep the table in source order. */
	for (i = unit_ntests; i > 0 && unit_tests[i - 1].line > line; i--)
		unit_tests[i] = unit_tests[i - 1];
	unit_tests[i] = (struct unit_test){ fn, name, line };
	unit_ntests++;
}

#define TEST(name)                                                          \
	static void name(void);                                             \
	__attribute__((constructor)) static void unit_register_##name(void) \
	{                                                                   \
		unit_register(name, #name, __LINE__);                       \
	}                                                                   \
	static void name(void)

/* The test running now, for the time limit's message. */
UNIT_UNUSED static const char *unit_running;

/* write(2) only: this runs in a signal handler. */
UNIT_UNUSED static void unit_say(const char *text)
{
	ssize_t n = write(STDOUT_FILENO, text, strlen(text));

	(void)n;
}

UNIT_UNUSED static void unit_on_alarm(int sig)
{
	(void)sig;
	unit_say("FAIL ");
	unit_say(unit_running);
	unit_say(": timed out\n");
	_exit(2);
}

UNIT_UNUSED static int unit_main(int argc, char **argv)
{
	int i;

	setvbuf(stdout, NULL, _IOLBF, 0); /* a crash loses no finished line */
	if (unit_overflow) {
		printf("FAIL %s: more than %d tests; raise UNIT_MAX_TESTS\n", argv[0], UNIT_MAX_TESTS);
		return 2;
	}
	if (argc > 1 && !strcmp(argv[1], "--count")) {
		printf("%d\n", unit_ntests);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "--list")) {
		for (i = 0; i < unit_ntests; i++)
			printf("%s\n", unit_tests[i].name);
		return 0;
	}
	/* A peer that closed must fail our writes, not kill the binary. */
	signal(SIGPIPE, SIG_IGN);
	signal(SIGALRM, unit_on_alarm);
	for (i = 0; i < unit_ntests; i++) {
		unit_running = unit_tests[i].name;
		unit_failed_current = 0;
		errno = 0;
		alarm(UNIT_TIME_LIMIT_S);
		unit_tests[i].fn();
		alarm(0);
		printf("%s %s\n", unit_failed_current ? "FAIL" : "PASS", unit_tests[i].name);
		unit_failures += unit_failed_current;
	}
	return unit_failures ? 1 : 0;
}

#define UNIT_MAIN()                           \
	int main(int argc, char **argv)       \
	{                                     \
		return unit_main(argc, argv); \
	}

#endif /* DYNPROF_UNIT_H */
