// SPDX-License-Identifier: MIT
/*
 * osrt_load MODE COUNT GO [CARD]: a target for bench/osrt.sh, the host-data
 * tracers' overhead. It opens CARD (a fake card node: the agent serves
 * windows to a process holding one), prints "ready <pid>", waits until the file GO
 * exists (the tracer under test attaches meanwhile), then starts the
 * workload's threads (created after the attach, as a tracer must follow
 * them), joins them and prints
 *   "done ns=<workload ns> calls=<calls made> tids=<tid,tid...>".
 * MODE:
 *   orc      one thread: COUNT x open+read(1 byte)+close of /dev/zero;
 *   getppid  one thread: COUNT getppid() system calls;
 *   mutex    4 threads: COUNT lock+unlock each of one shared mutex, as
 *            much work inside as outside (contended: futex calls, a
 *            number the scheduler decides; calls= is the lock+unlock pairs);
 *   compute  one thread: COUNT rounds of 1000 xorshift steps, no calls.
 * MODE-main (orc-main, getppid-main, compute-main): the same on the main
 * thread, which exists before the attach (what a tracer that follows no
 * new thread sees).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MUTEX_THREADS 4

static long count;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long sink;
static pid_t tids[MUTEX_THREADS];

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void *orc(void *arg)
{
	char c;

	*(pid_t *)arg = gettid();
	for (long i = 0; i < count; i++) {
		int fd = open("/dev/zero", O_RDONLY);

		if (fd < 0 || read(fd, &c, 1) != 1)
			abort(); /* a failed call would not be the workload measured */
		close(fd);
	}
	return NULL;
}

static void *getppid_loop(void *arg)
{
	*(pid_t *)arg = gettid();
	for (long i = 0; i < count; i++)
		syscall(SYS_getppid); /* the raw call: libc may cache getppid */
	return NULL;
}

/* 1000 steps of an xorshift: integer work the compiler cannot fold away. */
static unsigned long mix(unsigned long x, int steps)
{
	for (int i = 0; i < steps; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	return x;
}

static void *compute(void *arg)
{
	unsigned long x = sink | 1;

	*(pid_t *)arg = gettid();
	for (long i = 0; i < count; i++)
		x = mix(x, 1000);
	sink = x;
	return NULL;
}

static void *mutex_loop(void *arg)
{
	*(pid_t *)arg = gettid();
	for (long i = 0; i < count; i++) {
		unsigned long x = mix(i | 1, 100);

		pthread_mutex_lock(&lock);
		sink = mix(sink ^ x, 100); /* held a while: the others wait, futex */
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	void *(*fn)(void *) = NULL;
	pthread_t th[MUTEX_THREADS];
	int n = 1;
	double t0, t1;
	char mode[16] = "";
	size_t len;
	int on_main = 0;

	count = argc > 3 ? atol(argv[2]) : 0;
	if (argc > 3)
		snprintf(mode, sizeof(mode), "%s", argv[1]);
	len = strlen(mode);
	if (len > 5 && !strcmp(mode + len - 5, "-main"))
		mode[len - 5] = '\0', on_main = 1;
	if (!strcmp(mode, "orc"))
		fn = orc;
	else if (!strcmp(mode, "getppid"))
		fn = getppid_loop;
	else if (!strcmp(mode, "compute"))
		fn = compute;
	else if (!strcmp(mode, "mutex") && !on_main)
		fn = mutex_loop, n = MUTEX_THREADS;
	if (!fn || count < 1) {
		fprintf(stderr,
			"usage: osrt_load orc|getppid|mutex|compute[-main] COUNT GO_FILE [CARD]\n");
		return 2;
	}
	if (argc > 4 && open(argv[4], O_RDONLY) < 0) {
		perror(argv[4]);
		return 1;
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (access(argv[3], F_OK) != 0)
		usleep(2000);
	t0 = now_ns();
	if (on_main)
		fn(&tids[0]);
	for (int i = 0; i < n && !on_main; i++)
		if (pthread_create(&th[i], NULL, fn, &tids[i]) != 0)
			return 1;
	for (int i = 0; i < n && !on_main; i++)
		pthread_join(th[i], NULL);
	t1 = now_ns();
	printf("done ns=%.0f calls=%ld tids=", t1 - t0,
	       fn == orc     ? 3 * count :
	       fn == compute ? 0 :
			       count * n);
	for (int i = 0; i < n; i++)
		printf("%s%d", i ? "," : "", (int)tids[i]);
	printf("\n");
	return 0;
}
