// SPDX-License-Identifier: MIT
/*
 * callcount_probe: drives user/kernel/callcount.c from the command line, for the
 * integration tests (tests/integration/callcount.sh) and for measuring.
 *
 *   callcount_probe [--timeout=MS] [--until-exit] [--id=N] PID LIB SYMBOL [THRESHOLD...]
 *                   [--watch=PID:ID:LIB:SYMBOL[:THRESHOLD,...]]...
 *
 * Each probe is watched, then its thresholds armed. Lines, one per fact:
 *   attached probe=ID pid=PID us=MICROSECONDS     (the watch call's time)
 *   attached probe=ID pid=PID path=PATH            (later, once LIB was mapped)
 *   pending probe=ID pid=PID                       (LIB not mapped yet)
 *   error probe=ID: WHY                            (the watch failed; exit 1)
 *   failed probe=ID pid=PID: WHY                   (a pending probe never can count)
 *   fired probe=ID pid=PID count=N thresholds=T[,T...]
 *   count probe=ID pid=PID N                       (every probe, at the end)
 *   records sent=N lost=N                          (the kernel's ring-buffer records, at the end)
 *   forget us=N, close us=N                        (what forgetting every target, then closing, took)
 *   timeout                                        (exit 3)
 * It ends when every threshold has fired, or with --until-exit when every
 * target has exited, or at SIGTERM/SIGINT (status 0), or at the timeout
 * (default 30 s).
 */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "kernel/callcount.h"
#include "proc/procfs.h"

#define MAX_PROBES 512
#define MAX_THR 32

struct probe_arg {
	int pid;
	unsigned id;
	char lib[1024], symbol[256];
	uint64_t thr[MAX_THR];
	int fired[MAX_THR];
	int nthr;
	int failed;
};

struct run {
	struct probe_arg p[MAX_PROBES];
	int n;
	long timeout_ms;
	int until_exit;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int usage(void)
{
	fprintf(stderr, "usage: callcount_probe [--timeout=MS] [--until-exit] [--id=N] PID LIB SYMBOL "
			"[THRESHOLD...] [--watch=PID:ID:LIB:SYMBOL[:T,T...]]...\n");
	return 2;
}

static int add_thresholds(struct probe_arg *p, char *list)
{
	for (char *t = strtok(list, ","); t; t = strtok(NULL, ",")) {
		if (p->nthr == MAX_THR)
			return -1;
		p->thr[p->nthr++] = strtoull(t, NULL, 10);
	}
	return 0;
}

/* --watch=PID:ID:LIB:SYMBOL[:T,T...] */
static int parse_watch(struct run *r, char *spec)
{
	struct probe_arg *p = &r->p[r->n];
	char *f[5] = { 0 };
	int nf = 0;

	if (r->n == MAX_PROBES)
		return -1;
	for (char *s = strtok(spec, ":"); s && nf < 5; s = strtok(NULL, ":"))
		f[nf++] = s;
	if (nf < 4)
		return -1;
	p->pid = atoi(f[0]);
	p->id = (unsigned)strtoul(f[1], NULL, 10);
	snprintf(p->lib, sizeof(p->lib), "%s", f[2]);
	snprintf(p->symbol, sizeof(p->symbol), "%s", f[3]);
	if (nf == 5 && add_thresholds(p, f[4]))
		return -1;
	r->n++;
	return 0;
}

static int parse(struct run *r, int argc, char **argv)
{
	char *pos[3 + MAX_THR];
	int npos = 0;
	unsigned id = 0;

	r->timeout_ms = 30000;
	for (int i = 1; i < argc; i++) {
		char *a = argv[i];

		if (!strncmp(a, "--timeout=", 10))
			r->timeout_ms = atol(a + 10);
		else if (!strcmp(a, "--until-exit"))
			r->until_exit = 1;
		else if (!strncmp(a, "--id=", 5))
			id = (unsigned)strtoul(a + 5, NULL, 10);
		else if (!strncmp(a, "--watch=", 8)) {
			if (parse_watch(r, a + 8))
				return -1;
		} else if (a[0] == '-' || npos == 3 + MAX_THR)
			return -1;
		else
			pos[npos++] = a;
	}
	if (npos > 0 && npos < 3)
		return -1;
	if (npos >= 3) {
		struct probe_arg *p = &r->p[r->n++];

		*p = (struct probe_arg){ .pid = atoi(pos[0]), .id = id };
		snprintf(p->lib, sizeof(p->lib), "%s", pos[1]);
		snprintf(p->symbol, sizeof(p->symbol), "%s", pos[2]);
		for (int i = 3; i < npos; i++)
			p->thr[p->nthr++] = strtoull(pos[i], NULL, 10);
	}
	return r->n > 0 ? 0 : -1;
}

static struct probe_arg *find(struct run *r, int pid, unsigned id)
{
	for (int i = 0; i < r->n; i++)
		if (r->p[i].pid == pid && r->p[i].id == id)
			return &r->p[i];
	return NULL;
}

static void on_fired(void *ctx, int pid, unsigned id, const struct callcount_fire *f)
{
	struct probe_arg *p = find(ctx, pid, id);
	char list[MAX_THR * 21] = "";
	size_t used = 0;
	uint64_t count = f->count;

	if (!p)
		return;
	for (int i = 0; i < p->nthr; i++) {
		if (p->fired[i] || p->thr[i] > count)
			continue;
		p->fired[i] = 1;
		used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%llu",
					 used ? "," : "", (unsigned long long)p->thr[i]);
	}
	printf("fired probe=%u pid=%d count=%llu thresholds=%s\n", id, pid,
	       (unsigned long long)count, used ? list : "-");
}

static void on_attached(void *ctx, int pid, unsigned id, const char *path)
{
	(void)ctx;
	printf("attached probe=%u pid=%d path=%s\n", id, pid, path);
}

static void on_failed(void *ctx, int pid, unsigned id, const char *why)
{
	struct probe_arg *p = find(ctx, pid, id);

	if (p)
		p->failed = 1;
	printf("failed probe=%u pid=%d: %s\n", id, pid, why);
}

/* Watch every probe and arm its thresholds; 0, or -1 after an error line. */
static int watch_all(struct callcount *cc, struct run *r)
{
	char err[512];

	for (int i = 0; i < r->n; i++) {
		struct probe_arg *p = &r->p[i];
		int64_t t0 = now_us();
		int rc = callcount_watch(cc, p->pid, p->id, p->lib, p->symbol, err, sizeof(err));
		int64_t took = now_us() - t0;

		if (rc < 0) {
			printf("error probe=%u: %s\n", p->id, err);
			return -1;
		}
		if (rc == CALLCOUNT_ATTACHED)
			printf("attached probe=%u pid=%d us=%lld\n", p->id, p->pid, (long long)took);
		else
			printf("pending probe=%u pid=%d\n", p->id, p->pid);
		for (int k = 0; k < p->nthr; k++)
			if (callcount_arm(cc, p->pid, p->id, p->thr[k]) != 0) {
				printf("error probe=%u: pid %d: cannot arm %llu\n", p->id, p->pid,
				       (unsigned long long)p->thr[k]);
				return -1;
			}
	}
	return 0;
}

/* Every threshold fired (probes that failed count as done)? */
static int all_fired(const struct run *r)
{
	for (int i = 0; i < r->n; i++)
		for (int k = 0; k < r->p[i].nthr && !r->p[i].failed; k++)
			if (!r->p[i].fired[k])
				return 0;
	return 1;
}

static int all_exited(const struct run *r)
{
	for (int i = 0; i < r->n; i++)
		if (procfs_alive(r->p[i].pid))
			return 0;
	return 1;
}

/* Poll, consume, refresh until done; 0, or 3 at the timeout. */
static int loop(struct callcount *cc, struct run *r)
{
	struct callcount_handlers h = { on_fired, on_attached, on_failed, r };
	int64_t deadline = now_us() + r->timeout_ms * 1000;
	struct pollfd pfd = { .fd = callcount_fd(cc), .events = POLLIN };

	while (!stop) {
		int exited = r->until_exit && all_exited(r);

		/* After the targets exit, one last read: records they sent on the way. */
		callcount_consume(cc, &h);
		if (exited || (!r->until_exit && all_fired(r)))
			return 0;
		if (now_us() >= deadline) {
			printf("timeout\n");
			return 3;
		}
		fflush(stdout);
		poll(&pfd, 1, callcount_pending(cc) ? CALLCOUNT_REFRESH_MS : 50);
		if (callcount_pending(cc))
			callcount_refresh(cc, &h);
	}
	return 0;
}

/*
 * The kernel side's own tally of records, read from its .bss map among
 * this process's fds: what the program sent, independent of how user
 * space handled it. 0 when found.
 */
static int kernel_records(unsigned long long *sent, unsigned long long *lost)
{
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *de;
	int rc = -1;

	while (dir && rc && (de = readdir(dir))) {
		struct bpf_map_info info;
		uint32_t len = sizeof(info), key = 0;
		uint64_t value[2];
		int fd = atoi(de->d_name);

		memset(&info, 0, sizeof(info));
		if (de->d_name[0] < '0' || de->d_name[0] > '9' || bpf_obj_get_info_by_fd(fd, &info, &len))
			continue;
		if (info.type != BPF_MAP_TYPE_ARRAY || info.value_size != sizeof(value) ||
		    strcmp(info.name, "callcoun.bss") || bpf_map_lookup_elem(fd, &key, value))
			continue;
		*sent = value[0];
		*lost = value[1];
		rc = 0;
	}
	if (dir)
		closedir(dir);
	return rc;
}

int main(int argc, char **argv)
{
	unsigned long long sent = 0, lost = 0;
	int64_t t0;
	struct sigaction sa = { .sa_handler = on_signal };
	struct run *r = calloc(1, sizeof(*r));
	struct callcount *cc;
	char err[512];
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!r || parse(r, argc, argv)) {
		free(r);
		return usage();
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	cc = callcount_open(err, sizeof(err));
	if (!cc) {
		printf("error: BPF unavailable: %s\n", err);
		free(r);
		return 1;
	}
	rc = watch_all(cc, r) ? 1 : loop(cc, r);
	for (int i = 0; i < r->n; i++)
		printf("count probe=%u pid=%d %llu\n", r->p[i].id, r->p[i].pid,
		       (unsigned long long)callcount_read(cc, r->p[i].pid, r->p[i].id));
	if (kernel_records(&sent, &lost) == 0)
		printf("records sent=%llu lost=%llu\n", sent, lost);
	/* Forgetting a process leaves nothing of it counted. */
	t0 = now_us();
	for (int i = 0; i < r->n; i++) {
		callcount_forget(cc, r->p[i].pid);
		if (callcount_read(cc, r->p[i].pid, r->p[i].id) != 0 ||
		    callcount_arm(cc, r->p[i].pid, r->p[i].id, 1) != -ENOENT)
			printf("error: pid %d still counted after callcount_forget\n", r->p[i].pid);
	}
	printf("forget us=%lld\n", (long long)(now_us() - t0));
	t0 = now_us();
	callcount_close(cc);
	printf("close us=%lld\n", (long long)(now_us() - t0));
	free(r);
	return rc;
}
