// SPDX-License-Identifier: MIT
/*
 * card_job NODE HOLD_MS: a short AI job for the follow-mode benchmarks
 * (bench/follow.sh, bench/soak.sh). Run with LD_PRELOAD of the agent and
 * PROFILING_MODE=dynamic, its socket listens from the constructor on; it
 * prints "<pid> <CLOCK_REALTIME µs just before open()>" (before: a
 * watcher may have joined it by the time open returns), opens NODE,
 * holds it HOLD_MS and exits through exit(), so the agent's exit hook runs.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int main(int argc, char **argv)
{
	int hold = argc > 2 ? atoi(argv[2]) : -1, fd;
	long long t;

	if (argc < 3 || hold < 0) {
		fprintf(stderr, "usage: card_job NODE HOLD_MS\n");
		return 2;
	}
	t = now_us();
	fd = open(argv[1], O_RDONLY);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	printf("%d %lld\n", (int)getpid(), t);
	fflush(stdout);
	usleep((useconds_t)hold * 1000);
	close(fd);
	return 0;
}
