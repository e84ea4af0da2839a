// SPDX-License-Identifier: MIT
/*
 * call_loop: a target for bench/triggers.sh that calls one exported
 * function at a set rate and says how fast it really went.
 *
 *   call_loop [--rate=R] [--work=W] [--entry=step|push|mov|endbr|tail|movpush] [--seconds=S]
 *             [--card=PATH] [--wait-probe]
 *
 * Run with LD_PRELOAD=libdynprof_agent.so PROFILING_MODE=dynamic so dynprof
 * can attach (the preloaded agent counts the device as set while the card
 * node PATH is held open).
 *
 * The function called (--entry):
 *  step  bench_step: W rounds of demo_task's demo_step hash (default 4096,
 *        demo_step's amount), compiled C like any probed library function;
 *  push, mov, endbr, tail, movpush (x86-64 only): bench_push, bench_mov,
 *        bench_endbr, bench_tail, bench_movpush, empty functions whose first
 *        instructions are chosen, because a uprobe's cost depends on the one
 *        under it (see below); endbr is endbr64 then push, how
 *        -fcf-protection builds begin; tail is pthread_join's shape (three
 *        register moves and a tail jmp); movpush a rip-relative load, then push.
 * R calls per second (0, the default: as fast as they run), paced on
 * absolute deadlines, so the rate does not drift with the sleeps' overshoot
 * as demo_task's --step-ms does; that is what lets us ask for 10 000 calls/s.
 *
 * --wait-probe: begin the measured run only once a uprobe sits on the
 * function (its first code bytes change when the kernel writes the
 * breakpoint), so a probed run is probed from its first call.
 *
 * After S seconds (default 0: until SIGTERM or SIGINT) it prints one line:
 *   calls=N elapsed_us=T rate=R checksum=C
 * which the benchmark reads.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>
#include "../tools/cli_number.h"

#define PROBE_BYTES 16 /* the breakpoint may sit past the first instruction (kernel/probeplace.h) */
#define PROBE_WAIT_MS 10000
/* Calls between two looks at the clock when running flat out: reading it costs more than an empty call. */
#define CLOCK_EVERY 256

struct options {
	long rate;
	long work;
	long seconds;
	const char *entry;
	const char *card;
	int wait_probe;
};

static volatile sig_atomic_t stop_requested;
static volatile long step_work = 4096;

int bench_step(int step);

/* demo_step's hash, W rounds: real work the compiler cannot drop or inline. */
__attribute__((visibility("default"), noinline)) int bench_step(int step)
{
	static unsigned acc = 2166136261u;
	long n = step_work;

	for (long i = 0; i < n; i++)
		acc = (acc ^ (unsigned)(step + i)) * 16777619u;
	return (int)(acc >> 1);
}

#if defined(__x86_64__)
/*
 * On x86 the kernel emulates a few instructions at the breakpoint (push,
 * nop, jumps): one trap per hit. Any other first instruction (a
 * rip-relative load, endbr64) is copied out of line and single-stepped
 * there: a second trap. Written in assembly so the compiler cannot choose.
 */
__attribute__((visibility("hidden"))) int bench_word;
void bench_push(void);
void bench_mov(void);
void bench_endbr(void);
void bench_tail(void);
void bench_movpush(void);
__asm__(".pushsection .text\n"
	".globl bench_push\n.type bench_push, @function\n"
	"bench_push:\n\tpush %rbp\n\tpop %rbp\n\tret\n"
	".size bench_push, .-bench_push\n"
	".globl bench_mov\n.type bench_mov, @function\n"
	"bench_mov:\n\tmov bench_word(%rip), %eax\n\tret\n"
	".size bench_mov, .-bench_mov\n"
	".globl bench_endbr\n.type bench_endbr, @function\n"
	"bench_endbr:\n\tendbr64\n\tpush %rbp\n\tpop %rbp\n\tret\n"
	".size bench_endbr, .-bench_endbr\n"
	/* pthread_join's shape: register moves, then a tail jump to the real work. */
	".globl bench_tail\n.type bench_tail, @function\n"
	"bench_tail:\n\tmov $1, %r8d\n\txor %ecx, %ecx\n\txor %edx, %edx\n\tjmp bench_tail_work\n"
	".size bench_tail, .-bench_tail\n"
	"bench_tail_work:\n\tret\n"
	/* A load before the first push, as many compiled functions begin. */
	".globl bench_movpush\n.type bench_movpush, @function\n"
	"bench_movpush:\n\tmov bench_word(%rip), %eax\n\tpush %rbp\n\tpop %rbp\n\tret\n"
	".size bench_movpush, .-bench_movpush\n"
	".popsection\n");
#endif

/* The empty function --entry names; NULL for bench_step; -1 when unknown here. */
static int pick_entry(const char *name, void (**fn)(void))
{
	*fn = NULL;
	if (!name || !strcmp(name, "step"))
		return 0;
#if defined(__x86_64__)
	if (!strcmp(name, "push"))
		*fn = bench_push;
	else if (!strcmp(name, "mov"))
		*fn = bench_mov;
	else if (!strcmp(name, "endbr"))
		*fn = bench_endbr;
	else if (!strcmp(name, "tail"))
		*fn = bench_tail;
	else if (!strcmp(name, "movpush"))
		*fn = bench_movpush;
#endif
	return *fn ? 0 : -1;
}

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	*o = (struct options){ .work = 4096 };
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strncmp(a, "--rate=", 7) && !cli_parse_count(a + 7, &o->rate))
			continue;
		if (!strncmp(a, "--work=", 7) && !cli_parse_count(a + 7, &o->work))
			continue;
		if (!strncmp(a, "--seconds=", 10) && !cli_parse_count(a + 10, &o->seconds))
			continue;
		if (!strncmp(a, "--entry=", 8))
			o->entry = a + 8;
		else if (!strncmp(a, "--card=", 7))
			o->card = a + 7;
		else if (!strcmp(a, "--wait-probe"))
			o->wait_probe = 1;
		else
			return -1;
	}
	return 0;
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_until(long long ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000LL, .tv_nsec = ns % 1000000000LL };

	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

/*
 * The kernel writes its breakpoint over the probed instruction (one of the
 * function's first 16 bytes: kernel/probeplace.h) in
 * this process's copy of the page: the bytes we read change. 0 once they
 * did, -1 after PROBE_WAIT_MS or a signal.
 */
static int wait_for_probe(const void *fn)
{
	const volatile unsigned char *code = fn;
	unsigned char before[PROBE_BYTES];

	for (int i = 0; i < PROBE_BYTES; i++)
		before[i] = code[i];
	for (int ms = 0; ms < PROBE_WAIT_MS && !stop_requested; ms++) {
		for (int i = 0; i < PROBE_BYTES; i++)
			if (code[i] != before[i])
				return 0;
		sleep_until(now_ns() + 1000000LL);
	}
	return -1;
}

/*
 * Call the function until the end, each call at its deadline. A call more
 * than a period late (the loop was preempted) restarts the schedule from
 * now instead of bursting to catch up: the rate never exceeds R, as a real
 * step loop would not run faster to make up for a stall.
 */
static long run(const struct options *o, void (*fn)(void), long long end_ns, int *sink)
{
	long long period = o->rate ? 1000000000LL / o->rate : 0, next = now_ns();
	long calls = 0;

	while (!stop_requested) {
		if (fn)
			fn();
		else
			*sink ^= bench_step((int)calls);
		calls++;
		if (!period) {
			if (end_ns && calls % CLOCK_EVERY == 0 && now_ns() >= end_ns)
				break;
			continue;
		}
		next += period;
		if (now_ns() > next + period)
			next = now_ns();
		sleep_until(next);
		if (end_ns && now_ns() >= end_ns)
			break;
	}
	return calls;
}

static void install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static int usage(void)
{
	fprintf(stderr, "usage: call_loop [--rate=R] [--work=W] [--entry=step|push|mov|endbr] [--seconds=S] "
			"[--card=PATH] [--wait-probe]\n");
	return 2;
}

int main(int argc, char **argv)
{
	void (*fn)(void);
	struct options o;
	long long t0, t1;
	long calls;
	int fd = -1, sink = 0;

	if (parse_options(argc, argv, &o) || pick_entry(o.entry, &fn))
		return usage();
	install_signals();
	step_work = o.work;
	/* The default 50 µs timer slack would stretch a 100 µs period by half. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	if (o.card && (fd = open(o.card, O_RDONLY | O_CLOEXEC)) < 0) {
		fprintf(stderr, "call_loop: open %s: %s\n", o.card, strerror(errno));
		return 1;
	}
	printf("call_loop: pid %d ready\n", (int)getpid());
	fflush(stdout);
	if (o.wait_probe && wait_for_probe(fn ? (const void *)fn : (const void *)bench_step)) {
		fprintf(stderr, "call_loop: no uprobe after %d ms\n", PROBE_WAIT_MS);
		return 1;
	}
	t0 = now_ns();
	calls = run(&o, fn, o.seconds ? t0 + o.seconds * 1000000000LL : 0, &sink);
	t1 = now_ns();
	/* The checksum keeps bench_step's results live. */
	printf("calls=%ld elapsed_us=%lld rate=%.1f checksum=%d\n", calls, (t1 - t0) / 1000,
	       calls * 1e9 / (double)(t1 - t0 > 0 ? t1 - t0 : 1), sink);
	if (fd >= 0)
		close(fd);
	return 0;
}
