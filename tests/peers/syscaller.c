// SPDX-License-Identifier: MIT
/*
 * syscaller: a syscall-heavy target for the --host-sys=osrt tests (the
 * preloaded agent serves the protocol; this program never calls it).
 *
 *   syscaller NODE N GO
 *
 * Opens NODE (a card: the agent then has a device) and /dev/zero, starts
 * thread A, prints "syscaller: ready pid=<pid> fd=<fd of /dev/zero>", and
 * polls every 10 ms for the file GO. Once it exists, A does N read()s of
 * one byte of /dev/zero and main starts thread B, which does the same
 * (so B is born inside the window the test opened before making GO).
 * Then it prints "syscaller: done a=<tid> b=<tid> ns_per_call=<A's mean>"
 * and waits for SIGTERM.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int zero_fd;
static long calls;
static const char *go;
static volatile pid_t tid_a, tid_b;
static long long ns_a; /* thread A's reads, in ns */

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void wait_go(void)
{
	struct timespec ms10 = { 0, 10000000 };

	while (access(go, F_OK))
		nanosleep(&ms10, NULL);
}

static void reads(void)
{
	char c;

	for (long i = 0; i < calls; i++)
		if (read(zero_fd, &c, 1) != 1)
			exit(3);
}

static void *thread_a(void *arg)
{
	long long t0;

	(void)arg;
	tid_a = (pid_t)syscall(SYS_gettid);
	wait_go();
	t0 = now_ns();
	reads();
	ns_a = now_ns() - t0;
	return NULL;
}

static void *thread_b(void *arg)
{
	(void)arg;
	tid_b = (pid_t)syscall(SYS_gettid);
	reads();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;
	sigset_t term;
	int sig;

	if (argc != 4 || (calls = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: syscaller NODE N GO\n");
		return 2;
	}
	go = argv[3];
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigaddset(&term, SIGINT);
	pthread_sigmask(SIG_BLOCK, &term, NULL);
	zero_fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	if (zero_fd < 0 || open(argv[1], O_RDONLY | O_CLOEXEC) < 0) {
		perror("syscaller: open");
		return 1;
	}
	if (pthread_create(&a, NULL, thread_a, NULL))
		return 1;
	printf("syscaller: ready pid=%d fd=%d\n", (int)getpid(), zero_fd);
	fflush(stdout);
	wait_go();
	if (pthread_create(&b, NULL, thread_b, NULL))
		return 1;
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("syscaller: done a=%d b=%d ns_per_call=%lld\n", (int)tid_a, (int)tid_b, ns_a / calls);
	fflush(stdout);
	sigwait(&term, &sig);
	return 0;
}
