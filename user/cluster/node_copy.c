// SPDX-License-Identifier: MIT
/* One node's copy under a coordinator (see node_copy.h). */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "cli/attach_mode.h"
#include "cluster/cluster_exec.h"
#include "cluster/node_copy.h"
#include "common/thread.h"
#include "config/rule.h"
#include "report/report.h"
#include "model/tracker.h"
#include "shared/clock.h"

#define MAX_JOB_PIDS 4096
#define SCAN_PAUSE_US 100000 /* between two looks at the job's processes */
#define SCONTROL_TIMEOUT_MS 10000
#define NODE_ACK_WAIT_MS 5000 /* for the coordinator to say it read the exit frame */

/* The node's name: given, else SLURM's, else the host's. NULL (printed) when unfit for a folder. */
static const char *node_name(const char *given, char *buf, size_t len)
{
	const char *name = given;

	if (!strcmp(given, "-")) {
		name = getenv("SLURMD_NODENAME");
		if (!name || !*name) {
			if (gethostname(buf, len))
				buf[0] = '\0';
			buf[len - 1] = '\0';
			name = buf;
		}
	}
	if (options_node_name_valid(name, strlen(name)))
		return name;
	report_error("dynprof: node name '%s' cannot name a folder (letters, digits, '.', '_', '-')",
		     name);
	return NULL;
}

struct job_pids {
	int pid[MAX_JOB_PIDS];
	int n;
};

/* `scontrol listpids J`: the job's pids on this node (the first column, under a header). */
static int list_job_pids(const char *job, struct job_pids *jp)
{
	char *argv[] = { "scontrol", "listpids", (char *)job, NULL };
	char out[65536], err[512];
	int rc = cluster_capture(argv, out, sizeof(out), err, sizeof(err), SCONTROL_TIMEOUT_MS);

	jp->n = 0;
	if (rc) {
		err[strcspn(err, "\n")] = '\0';
		report_warning("dynprof: scontrol listpids %s: %s", job,
			       rc < 0 ? strerror(-rc) :
			       err[0] ? err :
					"failed");
		return -1;
	}
	for (char *line = strtok(out, "\n"); line && jp->n < MAX_JOB_PIDS; line = strtok(NULL, "\n")) {
		char *end;
		long pid = strtol(line, &end, 10);

		if (end != line && pid > 0 && pid <= INT_MAX && (*end == ' ' || *end == '\t' || !*end))
			jp->pid[jp->n++] = (int)pid;
	}
	return 0;
}

struct pick {
	const struct job_pids *jp;
	char list[MAX_JOB_PIDS * 11];
	size_t used;
	int found;
};

static bool in_job(const struct job_pids *jp, int pid)
{
	for (int i = 0; i < jp->n; i++)
		if (jp->pid[i] == pid)
			return true;
	return false;
}

static void pick_target(void *ctx, const struct pm_proc *p)
{
	struct pick *k = ctx;

	if (!p->cards || p->socket_state != PM_SOCKET_LISTENING || !in_job(k->jp, p->pid))
		return;
	k->used += (size_t)snprintf(k->list + k->used, sizeof(k->list) - k->used, "%s%d",
				    k->found ? "," : "", p->pid);
	k->found++;
}

/* The job's card users with a listening socket now, as a --pid list in k. */
static int scan_targets(const struct options *o, const struct job_pids *jp, struct pick *k)
{
	struct card_patterns patterns;
	const char *note;
	struct tracker *t;

	k->jp = jp;
	k->used = 0;
	k->found = 0;
	k->list[0] = '\0';
	options_card_patterns(o, &patterns);
	t = tracker_open(&patterns, TRACKER_SCAN_ONCE, NULL, NULL, false, &note);
	if (!t) {
		report_error("dynprof: cannot scan processes: %s", strerror(errno));
		return -1;
	}
	procmodel_foreach(tracker_model(t), pick_target, k);
	tracker_close(t);
	return 0;
}

/*
 * Wait for the job's targets: found, and the same at two looks in a row
 * (ranks of a step start within moments of each other), or the wait's end
 * with whatever was found. -1 (printed) when none was.
 */
static int job_targets(const struct options *o, char *list, size_t len)
{
	static struct job_pids jp;
	static struct pick now, before;
	int64_t deadline = clock_ms() + o->node_wait_ms;

	before.found = -1;
	for (;;) {
		if (list_job_pids(o->slurm_job, &jp) == 0 && scan_targets(o, &jp, &now))
			return -1;
		if (now.found > 0 && before.found == now.found && !strcmp(now.list, before.list))
			break;
		if (clock_ms() >= deadline) {
			if (now.found > 0)
				break;
			report_error("dynprof: job %s: no process of the job on this node holds a card and serves a dynamic profiling socket (waited %d ms; the workers need PROFILING_MODE=dynamic)",
				     o->slurm_job, o->node_wait_ms);
			return -1;
		}
		before = now;
		usleep(SCAN_PAUSE_US);
	}
	snprintf(list, len, "%s", now.list);
	report_info("job %s: %d target%s on this node: %s", o->slurm_job, now.found,
		    now.found == 1 ? "" : "s", now.list);
	return 0;
}

/*
 * The console's input goes through this thread: "start at:TIME" waits for
 * TIME (CLOCK_REALTIME) and becomes "start"; other lines pass unchanged,
 * in order. The end of input is passed on as the pipe's close, and told
 * through `acked`: after the exit frame it is the coordinator's
 * acknowledgement (node_copy.h).
 */
struct relay {
	int from, to;
	int acked; /* an eventfd */
};

static void write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

static void tell_acked(const struct relay *r)
{
	uint64_t one = 1;

	if (write(r->acked, &one, sizeof(one)) != sizeof(one)) {
		/* a full counter has been told already */
	}
}

static void relay_line(struct relay *r, char *line, size_t len)
{
	int64_t ms;

	if (len > 9 && !strncmp(line, "start at:", 9)) {
		line[len - 1] = '\0';
		if (time_parse_epoch_ms(line + 9, &ms) == 0) {
			struct timespec at = { ms / 1000, (ms % 1000) * 1000000 };

			while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &at, NULL) == EINTR)
				;
			write_all(r->to, "start\n", 6);
			return;
		}
		line[len - 1] = '\n';
	}
	write_all(r->to, line, len);
}

static void *relay_main(void *arg)
{
	struct relay *r = arg;
	char buf[4096];
	size_t used = 0;
	ssize_t n;

	while ((n = read(r->from, buf + used, sizeof(buf) - used)) != 0) {
		char *nl;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		used += (size_t)n;
		while ((nl = memchr(buf, '\n', used))) {
			size_t len = (size_t)(nl - buf) + 1;

			relay_line(r, buf, len);
			memmove(buf, buf + len, used - len);
			used -= len;
		}
		if (used == sizeof(buf)) { /* an over-long line goes on as it is */
			write_all(r->to, buf, used);
			used = 0;
		}
	}
	if (used)
		write_all(r->to, buf, used);
	close(r->to);
	close(r->from);
	tell_acked(r);
	return NULL;
}

/* Standard input through the relay thread. Its `acked` eventfd, or -1 (printed). */
static int start_relay(void)
{
	static struct relay r;
	pthread_t th;
	int p[2];

	r.acked = eventfd(0, EFD_CLOEXEC);
	r.from = dup(STDIN_FILENO);
	if (r.acked < 0 || r.from < 0 || pipe(p)) {
		report_error("dynprof: cannot relay the console: %s", strerror(errno));
		return -1;
	}
	r.to = p[1];
	if (dup2(p[0], STDIN_FILENO) < 0 || thread_start(&th, NULL, relay_main, &r)) {
		report_error("dynprof: cannot relay the console: %s", strerror(errno));
		return -1;
	}
	close(p[0]);
	pthread_detach(th);
	return r.acked;
}

/*
 * After the exit frame: stay until the coordinator said it read it (the
 * end of our input). srun tells of a task's end apart from its output,
 * and a step it then ends (one task killed, the others done) drops what it
 * had not relayed yet: seen as a node that ended well reported "without a
 * result".
 */
static void wait_acked(int acked)
{
	struct pollfd p = { .fd = acked, .events = POLLIN };
	int64_t deadline = clock_ms() + NODE_ACK_WAIT_MS;
	int left;

	while ((left = (int)clock_ms_left(deadline)) > 0 && poll(&p, 1, left) < 0 && errno == EINTR)
		;
}

int node_copy_run(struct options *o)
{
	static char list[MAX_JOB_PIDS * 11], output[PATH_MAX];
	char host[256];
	const char *name;
	int rc, acked = -1;

	dup2(STDOUT_FILENO, STDERR_FILENO); /* one stream per node, in order */
	name = node_name(o->node_copy, host, sizeof(host));
	if (!name)
		return EXIT_OPTION_ERROR;
	/* srun's step (J.S): the coordinator signals it through scancel, which srun does not do. */
	printf(NODE_COPY_TAG "%s hello pid=%d step=%s.%s\n", name, (int)getpid(),
	       getenv("SLURM_JOB_ID") ?: "-", getenv("SLURM_STEP_ID") ?: "-");
	fflush(stdout);
	if (snprintf(output, sizeof(output), "%s/%s", o->output ? o->output : ".", name) >=
	    (int)sizeof(output)) {
		report_error("Argument --output: the path with the node's name is too long");
		rc = EXIT_OPTION_ERROR;
	} else if ((acked = start_relay()) < 0) {
		rc = 1;
	} else if (o->slurm_job && job_targets(o, list, sizeof(list))) {
		rc = 1;
	} else {
		o->output = output;
		if (o->slurm_job)
			o->pid_list = list;
		rc = attach_mode_run(o);
	}
	printf(NODE_COPY_TAG "%s exit=%d\n", name, rc);
	fflush(stdout);
	if (acked >= 0)
		wait_acked(acked);
	return rc;
}
