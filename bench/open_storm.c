// SPDX-License-Identifier: MIT
/*
 * open_storm OPENS EXECS: an open/exec-heavy workload. OPENS times
 * open+close of /dev/null, then EXECS fork+exec of /bin/true, and prints
 * "opens_per_s=<N> elapsed_ms=<T>". Used to measure what watching costs
 * the workload and how many opens per second the kernel filter absorbs.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	long opens = argc > 1 ? atol(argv[1]) : 0, execs = argc > 2 ? atol(argv[2]) : 0;
	double t0 = now_s(), t_open;

	for (long i = 0; i < opens; i++) {
		int fd = open("/dev/null", O_RDONLY);

		if (fd >= 0)
			close(fd);
	}
	t_open = now_s();
	for (long i = 0; i < execs; i++) {
		pid_t p = fork();

		if (p == 0) {
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		if (p > 0)
			waitpid(p, NULL, 0);
	}
	printf("opens_per_s=%.0f elapsed_ms=%.1f\n",
	       t_open > t0 ? (double)opens / (t_open - t0) : 0.0, (now_s() - t0) * 1000.0);
	return 0;
}
