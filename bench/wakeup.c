// SPDX-License-Identifier: MIT
/*
 * wakeup FILE: the host's own wake-up latency, the floor under a join's
 * time (bench/follow.sh). A join is a chain of wake-ups of sleeping
 * processes and threads (the monitor on the card event, its joiner, the
 * target answering, the loop again): on a busy host each waits for a
 * core, whatever dynprof does. This measures the same thing with nothing
 * of dynprof in it: every 10 ms a round trip over a unix socket pair to
 * a child that sleeps in read(), so both ends are woken each time.
 * Until SIGTERM or SIGINT; then each round trip's time (µs, one per line)
 * goes to FILE.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SAMPLES_MAX (1 << 20)
#define PERIOD_NS 10000000L

static volatile sig_atomic_t done;

static void on_signal(int sig)
{
	(void)sig;
	done = 1;
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The child: answers each byte, until the parent's end closes. */
static void echo(int fd)
{
	char c;

	while (read(fd, &c, 1) == 1)
		if (write(fd, &c, 1) != 1)
			break;
	_exit(0);
}

static int save(const char *path, const long long *rtt, int n)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		perror(path);
		return 1;
	}
	for (int i = 0; i < n; i++)
		fprintf(f, "%.1f\n", rtt[i] / 1000.0);
	return fclose(f) ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct timespec period = { 0, PERIOD_NS };
	long long *rtt;
	int sv[2], n = 0;
	pid_t child;
	char c = 'x';

	if (argc != 2) {
		fprintf(stderr, "usage: wakeup FILE\n");
		return 2;
	}
	rtt = malloc(sizeof(*rtt) * SAMPLES_MAX);
	if (!rtt || socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) < 0) {
		perror("wakeup");
		return 1;
	}
	child = fork();
	if (child < 0) {
		perror("fork");
		return 1;
	}
	if (child == 0) {
		close(sv[0]);
		echo(sv[1]);
	}
	close(sv[1]);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	while (!done && n < SAMPLES_MAX) {
		long long t0;

		if (nanosleep(&period, NULL) < 0 && errno == EINTR)
			continue;
		t0 = now_ns();
		if (write(sv[0], &c, 1) != 1 || read(sv[0], &c, 1) != 1)
			break;
		rtt[n++] = now_ns() - t0;
	}
	close(sv[0]);
	waitpid(child, NULL, 0);
	return save(argv[1], rtt, n);
}
