// SPDX-License-Identifier: MIT
/*
 * syscall_storm MODE COUNT: what one operation costs, for the overhead
 * benchmark of the card-open hooks (bench/open_hook.sh). MODE:
 *   getppid   COUNT getppid() calls (the cheapest syscall);
 *   open      COUNT open()+close() of /dev/null;
 *   forkexec  COUNT fork()+execve("/bin/true")+waitpid();
 *   compute   COUNT rounds of a fixed integer loop (no syscall: a job
 *             bound to the CPU, which only a busy monitor could slow).
 * Prints "ns_per_op=<N>".
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void one_forkexec(void)
{
	pid_t p = fork();

	if (p == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	if (p > 0)
		waitpid(p, NULL, 0);
}

static void one_getppid(void)
{
	syscall(SYS_getppid); /* not a libc cache: it must enter the kernel */
}

static volatile unsigned long sink;

/* 1000 steps of an xorshift: integer work the compiler cannot fold away. */
static void one_compute(void)
{
	unsigned long x = sink | 1;

	for (int i = 0; i < 1000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	sink = x;
}

static void one_open(void)
{
	int fd = open("/dev/null", O_RDONLY);

	if (fd >= 0)
		close(fd);
}

int main(int argc, char **argv)
{
	long count = argc > 2 ? atol(argv[2]) : 0;
	void (*op)(void) = NULL;
	double t0;

	if (argc >= 3 && !strcmp(argv[1], "getppid"))
		op = one_getppid;
	else if (argc >= 3 && !strcmp(argv[1], "open"))
		op = one_open;
	else if (argc >= 3 && !strcmp(argv[1], "forkexec"))
		op = one_forkexec;
	else if (argc >= 3 && !strcmp(argv[1], "compute"))
		op = one_compute;
	if (!op || count < 1) {
		fprintf(stderr, "usage: syscall_storm getppid|open|forkexec|compute COUNT\n");
		return 2;
	}
	t0 = now_ns();
	for (long i = 0; i < count; i++)
		op();
	printf("ns_per_op=%.1f\n", (now_ns() - t0) / (double)count);
	return 0;
}
