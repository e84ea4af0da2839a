// SPDX-License-Identifier: MIT
/*
 * demo_task: a stand-in "AI task" that serves the dynamic-profiling socket
 * through the linked agent library, so dynprof can be tried and tested on
 * a machine without accelerators.
 *
 *   demo_task [--device=PATH] [--steps=N] [--step-ms=M] [--flush-ms=F] [--quiet]
 *
 * It opens a card node (PATH; without one, or when PATH does not exist, a
 * char device like /dev/full named davinci0 in a temporary folder, removed
 * at exit), starts the agent, sets the device numbered by the node's
 * trailing digits, and calls demo_step() every M ms (default 10), N times
 * (default 0: until SIGINT/SIGTERM). demo_step is exported and never
 * inlined, so uprobes can count it. One line at start names the pid, the
 * socket and the card; without --quiet a progress line follows every 100
 * steps. --flush-ms=F makes each STOP take F ms more, standing for the time
 * a real profiler spends flushing a window's data (benchmarks use it).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "dynprof/agent.h"
#include "cli_number.h"

#define PROGRESS_EVERY 100

struct options {
	const char *device;
	long steps;
	long step_ms;
	long flush_ms;
	int quiet;
};

/* A node this program made, to remove at exit. */
struct own_node {
	char dir[64];
	char path[96];
};

static volatile sig_atomic_t stop_requested;

int demo_step(int step);

/* Real arithmetic the compiler cannot drop: the result feeds the next step. */
__attribute__((visibility("default"), noinline)) int demo_step(int step)
{
	static unsigned acc = 2166136261u;

	for (int i = 0; i < 4096; i++)
		acc = (acc ^ (unsigned)(step + i)) * 16777619u;
	return (int)(acc >> 1);
}

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static int usage(void)
{
	fprintf(stderr,
		"usage: demo_task [--device=PATH] [--steps=N] [--step-ms=M] [--flush-ms=F] [--quiet]\n");
	return 2;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	*o = (struct options){ .steps = 0, .step_ms = 10 };
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strncmp(a, "--device=", 9))
			o->device = a + 9;
		else if (!strncmp(a, "--steps=", 8) && !cli_parse_count(a + 8, &o->steps))
			continue;
		else if (!strncmp(a, "--step-ms=", 10) && !cli_parse_count(a + 10, &o->step_ms))
			continue;
		else if (!strncmp(a, "--flush-ms=", 11) && !cli_parse_count(a + 11, &o->flush_ms))
			continue;
		else if (!strcmp(a, "--quiet"))
			o->quiet = 1;
		else
			return -1;
	}
	return 0;
}

/* The agent calls this before completing a window: stand for a data flush. */
static void flush_window(void *ctx, const char *prof_dir)
{
	const struct options *o = ctx;
	struct timespec ts = { o->flush_ms / 1000, (o->flush_ms % 1000) * 1000000L };

	(void)prof_dir;
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static struct dynprof_agent_ops flush_ops = { .on_stop = flush_window };

/* A char device like /dev/full, so opening it behaves like opening a card. */
static int make_node(struct own_node *n)
{
	snprintf(n->dir, sizeof(n->dir), "/tmp/demo_task.XXXXXX");
	if (!mkdtemp(n->dir)) {
		fprintf(stderr, "demo_task: mkdtemp: %s\n", strerror(errno));
		return -1;
	}
	snprintf(n->path, sizeof(n->path), "%s/davinci0", n->dir);
	if (mknod(n->path, S_IFCHR | 0600, makedev(1, 7)) < 0) {
		int err = errno;

		rmdir(n->dir);
		n->dir[0] = '\0';
		return -err;
	}
	return 0;
}

static void remove_node(struct own_node *n)
{
	if (!n->dir[0])
		return;
	unlink(n->path);
	rmdir(n->dir);
}

/* The node's trailing number: davinci3 -> 3; none -> 0. */
static int node_index(const char *path)
{
	const char *end = path + strlen(path), *p = end;

	while (p > path && isdigit((unsigned char)p[-1]))
		p--;
	return p == end || end - p > 6 ? 0 : atoi(p);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	/* A signal cuts the sleep short: the loop then sees stop_requested. */
	nanosleep(&ts, NULL);
}

static long run_steps(const struct options *o)
{
	long done = 0;
	int sink = 0;

	while (!stop_requested && (o->steps == 0 || done < o->steps)) {
		sink ^= demo_step((int)done);
		done++;
		if (!o->quiet && done % PROGRESS_EVERY == 0) {
			printf("demo_task: step %ld (%s)\n", done,
			       dynprof_agent_collecting() ? "collecting" : "idle");
			fflush(stdout);
		}
		if (o->step_ms)
			sleep_ms(o->step_ms);
	}
	if (!o->quiet)
		printf("demo_task: %ld steps, checksum %d\n", done, sink);
	return done;
}

static void install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static int serve(const struct options *o, const char *node)
{
	const char *path;
	int fd = -1, rc;

	/* No node (not root): the device is set through the API alone, as a card's open would. */
	if (node)
		fd = open(node, O_RDONLY | O_CLOEXEC);
	if (node && fd < 0) {
		fprintf(stderr, "demo_task: open %s: %s\n", node, strerror(errno));
		return 1;
	}
	flush_ops.ctx = (void *)o;
	rc = dynprof_agent_start(&flush_ops);
	if (rc) {
		fprintf(stderr, "demo_task: agent start: %s\n", strerror(-rc));
		close(fd);
		return 1;
	}
	dynprof_agent_set_device(node ? node_index(node) : 0);
	path = dynprof_agent_socket_path();
	printf("demo_task: pid %d serving %s, card %s\n", (int)getpid(), path ? path : "-",
	       node ? node : "none (device 0 set through the API)");
	fflush(stdout);
	run_steps(o);
	dynprof_agent_shutdown();
	if (fd >= 0)
		close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	struct own_node own = { "", "" };
	struct options o;
	const char *node;
	int rc;

	if (parse_options(argc, argv, &o))
		return usage();
	install_signals();
	node = o.device;
	if (!node || access(node, F_OK) != 0) {
		rc = make_node(&own);
		if (rc == -EPERM) {
			/* Not root: it still serves, holding no card; attach mode needs none. */
			fprintf(stderr,
				"demo_task: no card node made (mknod needs root): serving without one; attach with dynprof --pid=%d; for launch or follow mode give a node, e.g. --device=/dev/null\n",
				(int)getpid());
		} else if (rc) {
			fprintf(stderr, "demo_task: mknod %s/davinci0: %s\n",
				own.dir[0] ? own.dir : "/tmp/demo_task.*", strerror(-rc));
			return 1;
		}
		node = rc ? NULL : own.path;
	}
	rc = serve(&o, node);
	remove_node(&own);
	return rc;
}
