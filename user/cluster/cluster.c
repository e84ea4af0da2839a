// SPDX-License-Identifier: MIT
/* The coordinator of a whole cluster job (see cluster.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cluster/cluster.h"
#include "cluster/cluster_exec.h"
#include "cluster/cluster_plan.h"
#include "cluster/cluster_trace.h"
#include "cli/console.h"
#include "cluster/node_copy.h"
#include "report/report.h"
#include "shared/clock.h"

#define LINE_MAX_LEN 8192

/* What one node said of itself. */
struct node_rec {
	bool hello;
	int status; /* its exit status; -1: it never said */
	int targets, windows, folders, saved, incomplete, lost;
	char why[256]; /* srun's word about it (killed, lost...) */
};

/* One started command: srun (all nodes, lines labelled with the task) or a launcher (one node). */
struct chan {
	struct cluster_child c;
	int node; /* the launcher's node; -1 for srun */
	char out[LINE_MAX_LEN], err[LINE_MAX_LEN];
	size_t out_used, err_used;
	int status; /* -1 while it runs */
};

struct cluster {
	const struct options *o;
	struct cluster_plan plan;
	struct node_rec *nodes;
	int *task_node; /* srun's task number -> node index (-1: not said yet) */
	struct chan *chans;
	int nchans;
	int sigfd;
	bool input_open;
	char in[LINE_MAX_LEN];
	size_t in_used;
	int signal;    /* the first signal that came, 0: none */
	char step[48]; /* srun's step "J.S" (a node copy's hello says it), "": not known */
	FILE *events;  /* --events=json:PATH: the nodes' events go there (main opened it) */
};

static int node_index(const struct cluster *k, const char *name, size_t len)
{
	for (int i = 0; i < k->plan.n; i++)
		if (strlen(k->plan.names[i]) == len && !strncmp(k->plan.names[i], name, len))
			return i;
	return -1;
}

static void acknowledge(struct cluster *k);

/* "@dynprof-node NAME hello ..." or "... exit=S". */
static void on_frame(struct cluster *k, int task, int node, const char *text)
{
	const char *name = text + strlen(NODE_COPY_TAG), *rest;
	size_t len = strcspn(name, " ");
	int i = node_index(k, name, len);

	if (i < 0 || (node >= 0 && i != node))
		return; /* not one of ours: printed as it is */
	rest = name + len;
	if (!strncmp(rest, " hello", 6)) {
		const char *step = strstr(rest, " step=");

		k->nodes[i].hello = true;
		if (step && node < 0 && !strchr(step, '-'))
			snprintf(k->step, sizeof(k->step), "%.*s", (int)strcspn(step + 6, " "), step + 6);
		if (task >= 0 && task < k->plan.n)
			k->task_node[task] = i;
	} else if (!strncmp(rest, " exit=", 6)) {
		k->nodes[i].status = atoi(rest + 6);
		acknowledge(k); /* the copy may end now: all it said has come */
	}
}

/* The node copy's last line: "[INFO] summary: T targets joined, W windows opened, F PROF_ folders in ...". */
static void on_summary(struct node_rec *r, const char *text)
{
	const char *s = strstr(text, "summary: "), *fates;
	int t, w, f, saved, incomplete, lost;

	if (!s || sscanf(s, "summary: %d target%*[s ]joined, %d window%*[s ]opened, %d PROF_", &t,
			 &w, &f) != 3)
		return;
	r->targets = t;
	r->windows = w;
	r->folders = f;
	fates = strstr(s, "; windows: ");
	if (fates && sscanf(fates, "; windows: %d saved, %d saved incomplete, %d lost", &saved,
			    &incomplete, &lost) == 3) {
		r->saved = saved;
		r->incomplete = incomplete;
		r->lost = lost;
	}
}

/* A node's line on the coordinator's output: its name first; a JSON event gets a "node" member. */
static void print_node_line(const struct cluster *k, int node, int task, const char *text)
{
	const char *name = node >= 0 ? k->plan.names[node] : NULL;

	if (text[0] == '{' && name) /* "{}" does not occur: every event has members */
		fprintf(k->events ? k->events : stdout, "{\"node\":\"%s\",%s\n", name, text + 1);
	else if (name)
		printf("[%s] %s\n", name, text);
	else
		printf("[task %d] %s\n", task, text);
}

static void on_node_line(struct cluster *k, struct chan *ch, char *line)
{
	int task = -1, node = ch->node;
	char *text = line;

	if (node < 0) { /* srun --label: "N: text", N padded with blanks */
		char *end;
		long t = strtol(line, &end, 10);

		if (end != line && end[0] == ':' && end[1] == ' ') {
			task = (int)t;
			text = end + 2;
		}
	}
	if (!strncmp(text, NODE_COPY_TAG, strlen(NODE_COPY_TAG)))
		on_frame(k, task, node, text);
	if (node < 0 && task >= 0 && task < k->plan.n)
		node = k->task_node[task];
	if (node >= 0)
		on_summary(&k->nodes[node], text);
	if (strncmp(text, NODE_COPY_TAG, strlen(NODE_COPY_TAG)))
		print_node_line(k, node, task, text);
}

/* srun's own lines: "srun: error: n2: task 1: Killed" names the node that failed. */
static void on_srun_line(struct cluster *k, const char *line)
{
	const char *e = strstr(line, "error: ");

	printf("[srun] %s\n", line);
	if (!e)
		return;
	e += 7;
	for (int i = 0; i < k->plan.n; i++) {
		size_t len = strlen(k->plan.names[i]);

		if (!strncmp(e, k->plan.names[i], len) && e[len] == ':')
			snprintf(k->nodes[i].why, sizeof(k->nodes[i].why), "%s", e + len + 2);
		acknowledge(k); /* it ended: the others may be the last it waited for */
	}
}

/* Split what came on one pipe into lines. false at its end. */
static bool read_lines(struct cluster *k, struct chan *ch, int fd, bool is_err)
{
	char *buf = is_err ? ch->err : ch->out;
	size_t *used = is_err ? &ch->err_used : &ch->out_used;
	ssize_t n = read(fd, buf + *used, LINE_MAX_LEN - 1 - *used);
	char *nl;

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n <= 0) {
		if (*used) { /* a last line without its newline */
			buf[*used] = '\0';
			is_err ? on_srun_line(k, buf) : on_node_line(k, ch, buf);
			*used = 0;
		}
		return false;
	}
	*used += (size_t)n;
	while ((nl = memchr(buf, '\n', *used)) || *used == LINE_MAX_LEN - 1) {
		size_t len = nl ? (size_t)(nl - buf) : *used;

		buf[len] = '\0';
		is_err ? on_srun_line(k, buf) : on_node_line(k, ch, buf);
		len += nl ? 1 : 0;
		memmove(buf, buf + len, *used - len);
		*used -= len;
	}
	fflush(stdout);
	if (k->events)
		fflush(k->events);
	return true;
}

/* Every node gets the text; a node that does not read is told, not waited for. */
static void send_all(struct cluster *k, const char *text, size_t len)
{
	for (int i = 0; i < k->nchans; i++) {
		struct chan *ch = &k->chans[i];
		ssize_t w;

		if (ch->c.in < 0)
			continue;
		w = write(ch->c.in, text, len);
		if (w != (ssize_t)len && errno != EPIPE)
			report_warning("dynprof: %s: a command was not passed on (%s)",
				       ch->node >= 0 ? k->plan.names[ch->node] : "srun",
				       w < 0 ? strerror(errno) : "its input is full");
	}
}

static void close_input(struct chan *ch)
{
	if (ch->c.in >= 0) {
		close(ch->c.in);
		ch->c.in = -1;
	}
}

static void close_inputs(struct cluster *k)
{
	for (int i = 0; i < k->nchans; i++)
		close_input(&k->chans[i]);
}

/* A node that said its exit, or that srun said ended (killed, lost). */
static bool node_done(const struct node_rec *r)
{
	return r->status >= 0 || r->why[0];
}

/*
 * The acknowledgement of an exit frame is the end of that node's input
 * (node_copy.h): a launcher's own channel at once; srun's one input once
 * every node is done. Never a line: srun passes input to every task, and
 * data left unread at the end of a killed task's step resets srun's I/O
 * connection, which aborts the whole step (seen: every node killed).
 */
static void acknowledge(struct cluster *k)
{
	if (!k->o->slurm_job) {
		for (int i = 0; i < k->nchans; i++)
			if (k->chans[i].node >= 0 && k->nodes[k->chans[i].node].status >= 0)
				close_input(&k->chans[i]);
		return;
	}
	for (int i = 0; i < k->plan.n; i++)
		if (!node_done(&k->nodes[i]))
			return;
	close_inputs(k);
}

/* A console `start`: one wall-clock time for every node, now + the margin. */
static void send_start(struct cluster *k)
{
	int64_t at_ms = clock_wall_us() / 1000 + k->o->sync_margin_ms;
	time_t secs = (time_t)(at_ms / 1000);
	char line[64], when[32];
	struct tm tm;

	if (k->o->sync_margin_ms == 0) {
		send_all(k, "start\n", 6);
		return;
	}
	gmtime_r(&secs, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	report_info("start: every node opens its windows at %s.%03dZ (in %d ms)", when,
		    (int)(at_ms % 1000), k->o->sync_margin_ms);
	snprintf(line, sizeof(line), "start at:@%lld.%03d\n", (long long)(at_ms / 1000),
		 (int)(at_ms % 1000));
	send_all(k, line, strlen(line));
}

static void on_console_line(struct cluster *k, char *line)
{
	char *s = line;
	size_t len;

	while (*s == ' ' || *s == '\t')
		s++;
	len = strcspn(s, " \t\r");
	if (len == 5 && !strncmp(s, "start", 5) && !s[len + strspn(s + len, " \t\r")]) {
		send_start(k);
		return;
	}
	len = strlen(line);
	line[len] = '\n';
	send_all(k, line, len + 1);
	line[len] = '\0';
}

static void on_console(struct cluster *k)
{
	ssize_t n = read(STDIN_FILENO, k->in + k->in_used, sizeof(k->in) - 1 - k->in_used);
	char *nl;

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		if (k->in_used) {
			k->in[k->in_used] = '\0';
			on_console_line(k, k->in);
		}
		k->input_open = false;
		close_inputs(k); /* each node's end of input: quit there, unless rules go on */
		return;
	}
	k->in_used += (size_t)n;
	while ((nl = memchr(k->in, '\n', k->in_used))) {
		size_t len = (size_t)(nl - k->in) + 1;

		*nl = '\0';
		on_console_line(k, k->in);
		memmove(k->in, k->in + len, k->in_used - len);
		k->in_used -= len;
	}
	if (k->in_used == sizeof(k->in) - 1)
		k->in_used = 0; /* an over-long line: not a command */
}

/*
 * srun does not pass SIGTERM on (it kills the step): the step's tasks get
 * the signal from `scancel --signal`, and stop their windows. Before any
 * node said its step, srun itself is signalled.
 */
static void signal_step(struct cluster *k, int sig)
{
	char sigarg[32], err[256], out[256];
	char *argv[] = { "scancel", sigarg, k->step, NULL };
	int rc;

	snprintf(sigarg, sizeof(sigarg), "--signal=%s", sigabbrev_np(sig) ?: "TERM");
	rc = k->step[0] ? cluster_capture(argv, out, sizeof(out), err, sizeof(err), 10000) : -ENOENT;
	if (rc == 0)
		return;
	if (k->step[0])
		report_warning("dynprof: scancel %s %s failed (%s): ending srun", sigarg, k->step,
			       rc < 0 ? strerror(-rc) : err);
	kill(-k->chans[0].c.pid, SIGTERM);
}

/* SIGINT, SIGTERM, SIGHUP: every node gets it and stops its windows. */
static void on_signal(struct cluster *k)
{
	struct signalfd_siginfo si;
	ssize_t n = read(k->sigfd, &si, sizeof(si));

	if (n != sizeof(si))
		return;
	report_info("received SIG%s: stopping the windows on every node",
		    sigabbrev_np((int)si.ssi_signo) ?: "?");
	if (!k->signal)
		k->signal = (int)si.ssi_signo;
	if (k->o->slurm_job && k->nchans && k->chans[0].status < 0) {
		signal_step(k, k->signal);
		return;
	}
	for (int i = 0; i < k->nchans; i++)
		if (k->chans[i].status < 0)
			kill(-k->chans[i].c.pid, k->signal);
}

static int start_chans(struct cluster *k)
{
	int want = k->o->slurm_job ? 1 : k->plan.n;

	k->chans = calloc((size_t)want, sizeof(*k->chans));
	if (!k->chans)
		return -ENOMEM;
	for (int i = 0; i < want; i++) {
		struct chan *ch = &k->chans[k->nchans];
		char **argv = cluster_plan_argv(&k->plan, k->o, k->o->slurm_job ? -1 : i);
		int rc;

		if (!argv)
			return -ENOMEM;
		ch->node = k->o->slurm_job ? -1 : i;
		ch->status = -1;
		rc = cluster_spawn(argv, !k->o->slurm_job, &ch->c);
		if (rc) {
			report_error("dynprof: cannot run %s: %s", argv[0], strerror(-rc));
			cluster_plan_argv_free(argv);
			if (k->o->slurm_job)
				return rc;
			snprintf(k->nodes[i].why, sizeof(k->nodes[i].why), "its launcher did not start");
			continue;
		}
		cluster_plan_argv_free(argv);
		fcntl(ch->c.in, F_SETFL, O_NONBLOCK);
		k->nchans++;
	}
	return 0;
}

static bool chan_open(const struct chan *ch)
{
	return ch->c.out >= 0 || ch->c.err >= 0;
}

/* A command whose pipes ended: reaped (its status is the launcher's, or srun's). */
static void reap(struct chan *ch)
{
	int st;

	if (ch->status >= 0 || chan_open(ch))
		return;
	while (waitpid(ch->c.pid, &st, 0) < 0 && errno == EINTR)
		;
	ch->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	if (ch->c.in >= 0)
		close(ch->c.in);
	ch->c.in = -1;
}

static bool running(const struct cluster *k)
{
	for (int i = 0; i < k->nchans; i++)
		if (k->chans[i].status < 0)
			return true;
	return false;
}

static void poll_once(struct cluster *k, struct pollfd *pfds)
{
	int n = 0;

	pfds[n++] = (struct pollfd){ .fd = k->sigfd, .events = POLLIN };
	pfds[n++] = (struct pollfd){ .fd = k->input_open ? STDIN_FILENO : -1, .events = POLLIN };
	for (int i = 0; i < k->nchans; i++) {
		pfds[n++] = (struct pollfd){ .fd = k->chans[i].c.out, .events = POLLIN };
		pfds[n++] = (struct pollfd){ .fd = k->chans[i].c.err, .events = POLLIN };
	}
	if (poll(pfds, (nfds_t)n, -1) < 0)
		return;
	if (pfds[0].revents)
		on_signal(k);
	if (pfds[1].revents)
		on_console(k);
	for (int i = 0; i < k->nchans; i++) {
		struct chan *ch = &k->chans[i];

		for (int e = 0; e < 2; e++) {
			int *fd = e ? &ch->c.err : &ch->c.out;

			if (*fd >= 0 && pfds[2 + 2 * i + e].revents && !read_lines(k, ch, *fd, e)) {
				close(*fd);
				*fd = -1;
			}
		}
		reap(ch);
	}
}

/* A node copy that ended by the signal the coordinator passed on did what it was told. */
static bool node_failed(const struct cluster *k, const struct node_rec *r)
{
	return r->status != 0 && !(k->signal && r->status == 128 + k->signal);
}

static void print_node(const struct cluster *k, int i)
{
	const struct node_rec *r = &k->nodes[i];
	const char *name = k->plan.names[i];

	if (!node_failed(k, r))
		report_plain("  %s: %d target%s, %d window%s, %d PROF_ folder%s in %s/%s", name,
			     r->targets, r->targets == 1 ? "" : "s", r->windows,
			     r->windows == 1 ? "" : "s", r->folders, r->folders == 1 ? "" : "s",
			     k->plan.output, name);
	else if (r->status > 0)
		report_plain("  %s: FAILED (exit status %d): %d target%s, %d window%s, %d PROF_ folder%s in %s/%s%s%s",
			     name, r->status, r->targets, r->targets == 1 ? "" : "s", r->windows,
			     r->windows == 1 ? "" : "s", r->folders, r->folders == 1 ? "" : "s",
			     k->plan.output, name, r->why[0] ? "; " : "", r->why);
	else
		report_plain("  %s: FAILED: %s", name,
			     r->hello ? "its dynprof ended without a result (killed, or the node was lost)" :
					"its dynprof never started there");
	if (r->status < 0 && r->why[0])
		report_plain("      (%s)", r->why);
	/* Windows that did not end saved are a node's news even when it ended well. */
	if (r->incomplete || r->lost)
		report_plain("      (%s: %d window%s saved incomplete, %d lost)", name,
			     r->incomplete, r->incomplete == 1 ? "" : "s", r->lost);
}

static int summary(const struct cluster *k)
{
	char failed[1024] = "", state[64];
	size_t used = 0;
	int nfailed = 0;

	report_info("%s %s: %d node%s", k->o->slurm_job ? "job" : "nodes",
		    k->o->slurm_job ? k->o->slurm_job : k->o->nodes, k->plan.n,
		    k->plan.n == 1 ? "" : "s");
	for (int i = 0; i < k->plan.n; i++) {
		print_node(k, i);
		if (!node_failed(k, &k->nodes[i]))
			continue;
		if (used + CLUSTER_NAME_MAX + 8 < sizeof(failed))
			used += (size_t)snprintf(failed + used, sizeof(failed) - used, "%s%s",
						 nfailed ? ", " : "", k->plan.names[i]);
		nfailed++;
	}
	if (k->o->slurm_job && k->nchans && k->chans[0].status > 0 && nfailed == k->plan.n)
		report_info("srun exited with status %d%s", k->chans[0].status,
			    k->chans[0].status == 127 ?
				    " (not found: SLURM's client commands must be in PATH)" :
				    "");
	/* Nodes that failed together: the job itself may have ended (scancel, its time limit). */
	if (k->o->slurm_job && nfailed &&
	    !cluster_plan_job_state(k->o->slurm_job, state, sizeof(state)) && strcmp(state, "RUNNING"))
		report_info("job %s is %s now", k->o->slurm_job, state);
	if (nfailed)
		report_error("dynprof: %d of %d node%s failed: %s", nfailed, k->plan.n,
			     k->plan.n == 1 ? "" : "s", failed);
	else
		report_info(k->signal ? "every node stopped its windows" : "every node ended well");
	if (k->signal)
		return 128 + k->signal;
	return nfailed ? 1 : 0;
}

static int run(struct cluster *k)
{
	struct pollfd *pfds;
	int rc;

	k->nodes = calloc((size_t)k->plan.n, sizeof(*k->nodes));
	k->task_node = calloc((size_t)k->plan.n, sizeof(*k->task_node));
	pfds = calloc(2 + 2 * (size_t)(k->o->slurm_job ? 1 : k->plan.n), sizeof(*pfds));
	if (!k->nodes || !k->task_node || !pfds) {
		free(pfds);
		report_error("dynprof: out of memory");
		return 1;
	}
	for (int i = 0; i < k->plan.n; i++) {
		k->nodes[i].status = -1;
		k->task_node[i] = -1;
	}
	report_info("%s %s: dynprof on %d node%s: %s%s", k->o->slurm_job ? "job" : "nodes",
		    k->o->slurm_job ? k->o->slurm_job : k->o->nodes, k->plan.n,
		    k->plan.n == 1 ? "" : "s", k->plan.names[0], k->plan.n > 1 ? ", ..." : "");
	rc = start_chans(k);
	if (rc) {
		free(pfds);
		return EXIT_OPTION_ERROR;
	}
	if (k->plan.commands) {
		send_all(k, k->plan.commands, k->plan.commands_len);
		close_inputs(k);
	} else
		k->input_open = true;
	while (running(k))
		poll_once(k, pfds);
	free(pfds);
	return summary(k);
}

int cluster_run(const struct options *o)
{
	struct cluster k = { .o = o };
	int64_t began_us = clock_wall_us();
	int rc;

	if (cluster_plan_make(&k.plan, o)) {
		cluster_plan_free(&k.plan);
		return EXIT_OPTION_ERROR;
	}
	k.sigfd = console_signalfd();
	if (k.sigfd < 0) {
		report_error("dynprof: signalfd: %s", strerror(-k.sigfd));
		cluster_plan_free(&k.plan);
		return 1;
	}
	/* The file main created for --events=json:PATH: the nodes' events are appended to it. */
	if (o->events && !strncmp(o->events, "json:", 5) && !(k.events = fopen(o->events + 5, "ae"))) {
		report_error("Argument --events: %s: %s", o->events + 5, strerror(errno));
		close(k.sigfd);
		cluster_plan_free(&k.plan);
		return EXIT_OPTION_ERROR;
	}
	rc = run(&k);
	cluster_trace_merge(o, &k.plan, began_us);
	if (k.events)
		fclose(k.events);
	for (int i = 0; i < k.nchans; i++) {
		if (k.chans[i].c.in >= 0)
			close(k.chans[i].c.in);
	}
	close(k.sigfd);
	free(k.chans);
	free(k.nodes);
	free(k.task_node);
	cluster_plan_free(&k.plan);
	return rc;
}
