// SPDX-License-Identifier: MIT
/*
 * caller: a target for the call-counting tests, making exactly the calls
 * it is told to, when it is told to, so a test compares the kernel's count
 * with a known number.
 *
 *   caller ACTION...
 *
 * Actions run in order; each prints "caller: <action> done in <N> us" when finished.
 *   wait            until SIGUSR1 (the test's go-ahead, once its probe is attached)
 *   call=N          call dp_caller_hit() N times
 *   other=N         call dp_caller_other() N times
 *   threads=K,N     K threads, each calling dp_caller_hit() N times
 *   dlopen=PATH     load a library (libdpcalls.so)
 *   open=PATH       open PATH and keep it open (a card node: with the
 *                   preloaded agent, the process then has a device)
 *   libcall=N       call its dpcalls_hit() N times
 *   sleep=MS
 *   pause           until SIGTERM
 * The first line is "caller: ready pid=<pid as it sees itself>". SIGTERM
 * or SIGINT end it at any wait, sleep or pause, with status 0.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int dp_caller_hit(int x);
int dp_caller_other(int x);

static volatile int sink;
static int (*lib_hit)(int);
static long thread_calls;

/* Exported and never inlined, so a uprobe sees every call. */
__attribute__((visibility("default"), noinline)) int dp_caller_hit(int x)
{
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

__attribute__((visibility("default"), noinline)) int dp_caller_other(int x)
{
	__asm__ volatile("" ::: "memory");
	return x - 1;
}

static sigset_t watched_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	return set;
}

/* Wait for SIGUSR1 (when `go` is set) or the end; ms < 0: no time limit. */
static void wait_signal(int go, long ms)
{
	sigset_t set = watched_signals();
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	for (;;) {
		int sig = ms < 0 ? sigwaitinfo(&set, NULL) : sigtimedwait(&set, NULL, &ts);

		if (sig == SIGTERM || sig == SIGINT)
			exit(0);
		if (sig < 0 && ms >= 0)
			return; /* the time is up (or EINTR: close enough for a test) */
		if (sig == SIGUSR1 && go)
			return;
	}
}

static void *thread_main(void *arg)
{
	(void)arg;
	for (long i = 0; i < thread_calls; i++)
		sink = dp_caller_hit((int)i);
	return NULL;
}

static int run_threads(const char *spec)
{
	pthread_t t[64];
	long k;

	if (sscanf(spec, "%ld,%ld", &k, &thread_calls) != 2 || k < 1 || k > 64)
		return -1;
	for (long i = 0; i < k; i++)
		if (pthread_create(&t[i], NULL, thread_main, NULL) != 0)
			return -1;
	for (long i = 0; i < k; i++)
		pthread_join(t[i], NULL);
	return 0;
}

static int load_library(const char *path)
{
	void *h = dlopen(path, RTLD_NOW);

	if (!h) {
		fprintf(stderr, "caller: %s\n", dlerror());
		return -1;
	}
	lib_hit = (int (*)(int))dlsym(h, "dpcalls_hit");
	return lib_hit ? 0 : -1;
}

static int run(const char *a)
{
	long n = a[strcspn(a, "=")] ? atol(a + strcspn(a, "=") + 1) : 0;

	if (!strcmp(a, "wait"))
		wait_signal(1, -1);
	else if (!strcmp(a, "pause"))
		wait_signal(0, -1);
	else if (!strncmp(a, "call=", 5))
		for (long i = 0; i < n; i++)
			sink = dp_caller_hit((int)i);
	else if (!strncmp(a, "other=", 6))
		for (long i = 0; i < n; i++)
			sink = dp_caller_other((int)i);
	else if (!strncmp(a, "threads=", 8))
		return run_threads(a + 8);
	else if (!strncmp(a, "dlopen=", 7))
		return load_library(a + 7);
	else if (!strncmp(a, "open=", 5))
		return open(a + 5, O_RDONLY) < 0 ? -1 : 0; /* kept open until exit */
	else if (!strncmp(a, "libcall=", 8) && lib_hit)
		for (long i = 0; i < n; i++)
			sink = lib_hit((int)i);
	else if (!strncmp(a, "sleep=", 6))
		wait_signal(0, n);
	else
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	sigset_t set = watched_signals();

	/* Blocked, so they wait for sigwaitinfo; threads inherit the mask. */
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("caller: ready pid=%d\n", (int)getpid());
	fflush(stdout);
	for (int i = 1; i < argc; i++) {
		struct timespec t0, t1;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (run(argv[i]) != 0) {
			fprintf(stderr, "caller: cannot do %s\n", argv[i]);
			return 2;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		printf("caller: %s done in %ld us\n", argv[i],
		       (long)((t1.tv_sec - t0.tv_sec) * 1000000 + (t1.tv_nsec - t0.tv_nsec) / 1000));
		fflush(stdout);
	}
	return 0;
}
