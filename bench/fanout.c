// SPDX-License-Identifier: MIT
/*
 * Fan-out benchmark: one start+stop window across N targets, sent the way
 * dynprof sends it (all targets at once) and the way msprof sends it (one
 * target after another), alternating in the same run so machine noise hits
 * both alike. Prints the medians and their ratio.
 *
 * usage: fanout ROUNDS PID...   (targets must serve the protocol)
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared/clock.h"
#include "config/options.h"
#include "session/session.h"
#include "session/session_view.h"

#define MAX_TARGETS 64

static int quiet_stdout(void)
{
	int saved = dup(STDOUT_FILENO), null = open("/dev/null", O_WRONLY);

	fflush(stdout);
	dup2(null, STDOUT_FILENO);
	close(null);
	return saved;
}

static void restore_stdout(int saved)
{
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
}

static int open_session(struct session **s, struct options *o, const char *pids, char *argv_pid)
{
	char *argv[] = { "fanout", argv_pid, NULL };

	snprintf(argv_pid, 4096, "--pid=%s", pids);
	if (options_parse(2, argv, o))
		return -1;
	return session_open(s, o, "/tmp/dynprof-bench-out", NULL) > 0 ? 0 : -1;
}

/*
 * A command goes out beside the loop (each target's queue): the loop is
 * run here, as dynprof's own runs it, until every target it went to
 * replied. (Timing session_command alone timed the queueing only.)
 */
static void command_and_wait(struct session *s, enum proto_command cmd)
{
	struct pollfd pfds[MAX_TARGETS];
	unsigned serial;

	session_command(s, cmd);
	serial = session_command_serial(s);
	while (!session_replied(s, serial)) {
		int n = session_flight_pollfds(s, pfds, MAX_TARGETS);
		int64_t wait = session_flight_timeout_ms(s);

		if (poll(pfds, (nfds_t)n, wait < 0 || wait > 100 ? 100 : (int)wait) < 0 && errno != EINTR)
			break;
		session_flight_step(s);
	}
}

/* One window in every target, all at once. */
static int64_t window_parallel(struct session *all)
{
	int64_t t0 = clock_ms();

	command_and_wait(all, PROTO_CMD_START);
	command_and_wait(all, PROTO_CMD_STOP);
	return clock_ms() - t0;
}

/* One window in every target, one target at a time, each reply awaited (msprof's loop). */
static int64_t window_serial(struct session **one, int n)
{
	int64_t t0 = clock_ms();

	for (int i = 0; i < n; i++)
		command_and_wait(one[i], PROTO_CMD_START);
	for (int i = 0; i < n; i++)
		command_and_wait(one[i], PROTO_CMD_STOP);
	return clock_ms() - t0;
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	static char pidarg[MAX_TARGETS + 1][4096];
	struct session *all, *one[MAX_TARGETS];
	struct options oall, oone[MAX_TARGETS];
	int rounds = argc > 1 ? atoi(argv[1]) : 0, n = argc - 2, saved;
	int64_t par[256], ser[256];
	char list[4096] = "";

	if (rounds < 1 || rounds > 256 || n < 1 || n > MAX_TARGETS) {
		fprintf(stderr, "usage: fanout ROUNDS(1-256) PID...\n");
		return 2;
	}
	for (int i = 0; i < n; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? "," : "",
			 argv[i + 2]);
	saved = quiet_stdout();
	/* A server serves one client at a time: the two styles take turns per target. */
	for (int r = 0; r < rounds; r++) {
		if (open_session(&all, &oall, list, pidarg[MAX_TARGETS]))
			goto fail;
		par[r] = window_parallel(all);
		session_shutdown(all);
		session_close(all);
		options_free(&oall);
		for (int i = 0; i < n; i++)
			if (open_session(&one[i], &oone[i], argv[i + 2], pidarg[i]))
				goto fail;
		ser[r] = window_serial(one, n);
		for (int i = 0; i < n; i++) {
			session_shutdown(one[i]);
			session_close(one[i]);
			options_free(&oone[i]);
		}
	}
	restore_stdout(saved);
	qsort(par, (size_t)rounds, sizeof(par[0]), cmp64);
	qsort(ser, (size_t)rounds, sizeof(ser[0]), cmp64);
	printf("targets=%d rounds=%d parallel_median_ms=%lld serial_median_ms=%lld serial_over_parallel=%.2f\n",
	       n, rounds, (long long)par[rounds / 2], (long long)ser[rounds / 2],
	       par[rounds / 2] ? (double)ser[rounds / 2] / (double)par[rounds / 2] : 0.0);
	return 0;
fail:
	restore_stdout(saved);
	fprintf(stderr, "fanout: could not open a session to the targets\n");
	return 1;
}
