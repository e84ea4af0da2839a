// SPDX-License-Identifier: MIT
/*
 * card_user: a process that holds a card node open, for LD_PRELOAD tests
 * of the agent (the preload constructor does all the agent's work; this
 * program never calls its API).
 *
 *   card_user [NODE [SECONDS [PROGRAM ARGS...]]]
 *
 * Opens NODE read-only when given (and not "-"), prints "ready <pid>",
 * then waits SECONDS (default 600) or until SIGTERM/SIGINT, and exits 0
 * through exit(), so the agent's exit hook runs. With PROGRAM, it execs
 * PROGRAM ARGS instead of exiting once SECONDS have passed (a process that
 * re-execs: same pid, new image). CARD_USER_OPEN_DELAY_MS=N in the
 * environment delays the open by N ms (a process that sets its device
 * late: the agent answers START with NOT_SET_DEVICE until then).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_SECONDS 600

static int parse_seconds(const char *text, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(text, &end, 10);
	return errno || !*text || *end || *out < 0 || *out > INT_MAX ? -1 : 0;
}

/* Wait for SIGTERM/SIGINT (blocked, so they are taken here) or the timeout. */
static void wait_for_end(long seconds)
{
	struct timespec ts = { .tv_sec = seconds };
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	while (sigtimedwait(&set, NULL, &ts) < 0 && errno == EINTR)
		;
}

static void open_delay(void)
{
	const char *ms = getenv("CARD_USER_OPEN_DELAY_MS");
	struct timespec ts;
	long n;

	if (!ms || parse_seconds(ms, &n))
		return;
	ts = (struct timespec){ .tv_sec = n / 1000, .tv_nsec = n % 1000 * 1000000 };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void on_signal_unused(int sig)
{
	(void)sig;
}

int main(int argc, char **argv)
{
	long seconds = DEFAULT_SECONDS;
	const char *node = argc > 1 ? argv[1] : NULL;
	sigset_t set;
	int fd = -1;

	if (argc > 2 && parse_seconds(argv[2], &seconds)) {
		fprintf(stderr, "usage: card_user [NODE|-] [SECONDS [PROGRAM ARGS...]]\n");
		return 2;
	}
	/* Blocked before anything else, so an early SIGTERM is not fatal. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	/*
	 * A handler, never run (the signals stay blocked and sigtimedwait takes
	 * them): as pid 1 of a pid namespace, the kernel drops signals whose
	 * disposition is the default, so without it SIGTERM from the host
	 * would not end a contained card_user.
	 */
	signal(SIGTERM, on_signal_unused);
	signal(SIGINT, on_signal_unused);
	if (node && strcmp(node, "-")) {
		open_delay();
		fd = open(node, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			fprintf(stderr, "card_user: open %s: %s\n", node, strerror(errno));
			return 1;
		}
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	wait_for_end(seconds);
	if (fd >= 0)
		close(fd);
	if (argc > 3) {
		execvp(argv[3], &argv[3]);
		fprintf(stderr, "card_user: exec %s: %s\n", argv[3], strerror(errno));
		return 127;
	}
	return 0;
}
