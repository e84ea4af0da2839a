// SPDX-License-Identifier: MIT
/*
 * stepper: a workload for the slow:, gap: and stall: tests, whose step
 * function takes the time it is told to, on the calls it is told to.
 *
 *   stepper ACTION...
 *
 * Actions run in order; each prints "stepper: <action> done" when finished.
 *   open=PATH            open PATH and keep it open (a card node: with the
 *                        preloaded agent, the process then has a device)
 *   step=N,IN,GAP        N calls of dp_step(IN): each sleeps IN ms inside,
 *                        then GAP ms pass before the next call
 *   threads=K,N,IN,GAP[,STAGGER]
 *                        K threads doing step=N,IN,GAP at once; thread i
 *                        begins i*STAGGER ms after the first (default 0),
 *                        so that their calls overlap instead of keeping step
 *   recurse=N,D,IN       N calls of dp_recurse(D, IN): it calls itself D
 *                        deep, and every level sleeps IN ms once the one
 *                        it called returned: the outermost call takes
 *                        (D + 1) * IN ms, the innermost IN
 *   wait                 until SIGUSR1 (blocks: a stall ended by the test)
 *   sleep=MS
 *   pause                until SIGTERM
 * With STEPPER_LOG_RETURNS=1 every dp_step() whose IN is at least
 * STEPPER_LOG_MIN_MS (default 1) prints "stepper: return us=<wall clock>"
 * as it returns (the benchmark's reference time).
 * The first line is "stepper: ready pid=<pid>". SIGTERM or SIGINT end it
 * at any wait or pause with status 0.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int dp_step(int in_ms);
int dp_recurse(int depth, int in_ms);

static volatile int sink;
static int log_returns;
static long log_min_ms = 1;

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (ms > 0 && nanosleep(&ts, &ts) != 0)
		;
}

static long long wall_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

/* Exported and never inlined, so a uprobe and a uretprobe see every call. */
__attribute__((visibility("default"), noinline)) int dp_step(int in_ms)
{
	sleep_ms(in_ms);
	if (log_returns && in_ms >= log_min_ms) {
		printf("stepper: return us=%lld\n", wall_us());
		fflush(stdout);
	}
	__asm__ volatile("" ::: "memory");
	return in_ms + 1;
}

__attribute__((visibility("default"), noinline)) int dp_recurse(int depth, int in_ms)
{
	int r = depth > 0 ? dp_recurse(depth - 1, in_ms) + 1 : 0;

	sleep_ms(in_ms);
	__asm__ volatile("" ::: "memory");
	return r;
}

struct steps {
	long n, in, gap, delay; /* delay: ms before the first call (a thread's stagger) */
};

static void do_steps(const struct steps *s)
{
	for (long i = 0; i < s->n; i++) {
		sink = dp_step((int)s->in);
		sleep_ms(s->gap);
	}
}

static void *thread_main(void *arg)
{
	const struct steps *s = arg;

	sleep_ms(s->delay);
	do_steps(s);
	return NULL;
}

static int run_threads(const char *spec)
{
	pthread_t t[64];
	struct steps s[64];
	long k, n, in, gap, stagger = 0;
	int got = sscanf(spec, "%ld,%ld,%ld,%ld,%ld", &k, &n, &in, &gap, &stagger);

	if (got < 4 || k < 1 || k > 64 || stagger < 0)
		return -1;
	for (long i = 0; i < k; i++) {
		s[i] = (struct steps){ n, in, gap, i * stagger };
		if (pthread_create(&t[i], NULL, thread_main, &s[i]) != 0)
			return -1;
	}
	for (long i = 0; i < k; i++)
		pthread_join(t[i], NULL);
	return 0;
}

static void wait_signal(int go)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	for (;;) {
		sig = sigwaitinfo(&set, NULL);
		if (sig == SIGTERM || sig == SIGINT)
			exit(0);
		if (sig == SIGUSR1 && go)
			return;
	}
}

static int run(const char *a)
{
	struct steps s = { 0 };
	long n, d, in;

	if (!strcmp(a, "wait"))
		wait_signal(1);
	else if (!strcmp(a, "pause"))
		wait_signal(0);
	else if (!strncmp(a, "open=", 5))
		return open(a + 5, O_RDONLY) < 0 ? -1 : 0; /* kept open until exit */
	else if (sscanf(a, "step=%ld,%ld,%ld", &s.n, &s.in, &s.gap) == 3)
		do_steps(&s);
	else if (!strncmp(a, "threads=", 8))
		return run_threads(a + 8);
	else if (sscanf(a, "recurse=%ld,%ld,%ld", &n, &d, &in) == 3)
		for (long i = 0; i < n; i++)
			sink = dp_recurse((int)d, (int)in);
	else if (!strncmp(a, "sleep=", 6))
		sleep_ms(atol(a + 6));
	else
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	sigset_t set;
	const char *env = getenv("STEPPER_LOG_RETURNS");

	log_returns = env && !strcmp(env, "1");
	if ((env = getenv("STEPPER_LOG_MIN_MS")))
		log_min_ms = atol(env);
	/* Blocked in every thread, taken by sigwaitinfo. */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	printf("stepper: ready pid=%d\n", (int)getpid());
	fflush(stdout);
	for (int i = 1; i < argc; i++) {
		if (run(argv[i])) {
			fprintf(stderr, "stepper: bad action '%s'\n", argv[i]);
			return 2;
		}
		printf("stepper: %s done\n", argv[i]);
		fflush(stdout);
	}
	return 0;
}
