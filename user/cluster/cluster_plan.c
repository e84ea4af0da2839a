// SPDX-License-Identifier: MIT
/* What a cluster coordinator runs (see cluster_plan.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster/cluster_exec.h"
#include "cluster/cluster_plan.h"
#include "results/output.h"
#include "report/report.h"

#define SCONTROL_TIMEOUT_MS 20000
#define COMMANDS_MAX (1 << 20)

static int add_name(struct cluster_plan *p, const char *name, size_t len)
{
	if (!options_node_name_valid(name, len)) {
		report_error("dynprof: node name '%.*s' cannot name a folder (letters, digits, '.', '_', '-')",
			     (int)len, name);
		return -1;
	}
	if (p->n == CLUSTER_MAX_NODES) {
		report_error("dynprof: more than %d nodes", CLUSTER_MAX_NODES);
		return -1;
	}
	memcpy(p->names[p->n], name, len);
	p->names[p->n++][len] = '\0';
	return 0;
}

static bool state_char(char c)
{
	return (c >= 'A' && c <= 'Z') || c == '_';
}

/* What a hostlist holds ("n[1-3,7],gpu-a.b"): no blank, no '=', nothing a name could add. */
static bool nodelist_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       (c && strchr("._-,[]", c));
}

int cluster_plan_parse_queue(const char *out, char *state, size_t slen, char *nodes, size_t nlen)
{
	size_t s = 0, n;

	state[0] = nodes[0] = '\0';
	while (state_char(out[s]))
		s++;
	if (s == 0 || s >= slen || (out[s] != ' ' && out[s] != '\n' && out[s]))
		return -EINVAL;
	memcpy(state, out, s);
	state[s] = '\0';
	if (out[s] != ' ')
		return 0;
	out += s + 1;
	for (n = 0; nodelist_char(out[n]); n++)
		;
	if (n >= nlen || (out[n] != '\n' && out[n])) {
		state[0] = '\0';
		return -EINVAL;
	}
	memcpy(nodes, out, n);
	nodes[n] = '\0';
	return 0;
}

/* A SLURM client command (scontrol, squeue); the message names it by `what`. */
static int slurm_cmd(char *const argv[], const char *what, char *out, size_t len)
{
	char err[512];
	int rc = cluster_capture(argv, out, len, err, sizeof(err), SCONTROL_TIMEOUT_MS);

	if (rc == 0)
		return 0;
	err[strcspn(err, "\n")] = '\0';
	report_error("dynprof: %s: %s", what,
		     rc == -ENOENT ? "not found (SLURM's client commands must be in PATH)" :
		     rc < 0        ? strerror(-rc) :
		     err[0]        ? err :
				     "failed");
	return -1;
}

/*
 * squeue asked for the state and the node list alone ("%T %N"), so that no
 * value a user chooses (the job's name, its comment, its working folder)
 * is in the text: `scontrol show job -o` puts them all on the line, where
 * a job named "x JobState=RUNNING NodeList=nodeZ" poses as those fields.
 * --states=all: a job that ended is still shown while slurmctld keeps it.
 */
#define QUEUE_ARGV(job)                                                                                 \
	{                                                                                               \
		"squeue", "--noheader", "--states=all", "--format=%T %N", "--jobs", (char *)(job), NULL \
	}

int cluster_plan_job_state(const char *job, char *state, size_t len)
{
	char *argv[] = QUEUE_ARGV(job);
	char out[65536], nodes[16384];

	state[0] = '\0';
	if (cluster_capture(argv, out, sizeof(out), NULL, 0, SCONTROL_TIMEOUT_MS) ||
	    cluster_plan_parse_queue(out, state, len, nodes, sizeof(nodes)))
		return -1;
	return 0;
}

/* The job's nodes: it must be running; its node list expanded by scontrol show hostnames. */
static int slurm_nodes(struct cluster_plan *p, const char *job)
{
	char *queue[] = QUEUE_ARGV(job);
	char out[65536], state[64] = "", list[16384] = "";
	char *hosts[] = { "scontrol", "show", "hostnames", list, NULL };
	static char names[CLUSTER_MAX_NODES * CLUSTER_NAME_MAX];

	if (slurm_cmd(queue, "squeue --jobs", out, sizeof(out)))
		return -1;
	if (cluster_plan_parse_queue(out, state, sizeof(state), list, sizeof(list))) {
		report_error("dynprof: job %s: squeue's answer is not a state and a node list", job);
		return -1;
	}
	if (strcmp(state, "RUNNING")) {
		report_error("dynprof: job %s is %s, not RUNNING: no node runs it", job,
			     state[0] ? state : "unknown");
		return -1;
	}
	if (!list[0]) {
		report_error("dynprof: job %s: squeue shows no node list", job);
		return -1;
	}
	if (slurm_cmd(hosts, "scontrol show hostnames", names, sizeof(names)))
		return -1;
	for (char *s = strtok(names, "\n"); s; s = strtok(NULL, "\n"))
		if (add_name(p, s, strlen(s)))
			return -1;
	return 0;
}

static int listed_nodes(struct cluster_plan *p, const char *v)
{
	for (const char *s = v;;) {
		size_t len = strcspn(s, ",");

		if (add_name(p, s, len))
			return -1;
		if (!s[len])
			return 0;
		s = s + len + 1;
	}
}

/* The --commands file read whole ("-": standard input), to be sent to every node. */
static int read_commands(struct cluster_plan *p, const char *path)
{
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : dup(STDIN_FILENO);
	ssize_t n;

	if (fd < 0 || !(p->commands = malloc(COMMANDS_MAX))) {
		report_error("Argument --commands: %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while ((n = read(fd, p->commands + p->commands_len, COMMANDS_MAX - p->commands_len)) > 0)
		p->commands_len += (size_t)n;
	close(fd);
	if (n < 0 || p->commands_len == COMMANDS_MAX) {
		report_error("Argument --commands: %s: %s", path,
			     n < 0 ? strerror(errno) : "larger than 1 MiB");
		return -1;
	}
	return 0;
}

/* Options the coordinator keeps for itself or gives the node copy in another form. */
static bool coordinator_only(const char *arg)
{
	static const char *const own[] = {
		"--nodes=",       "--launcher=",  "--output=", "--commands=",
		"--sync-margin=", "--node-copy=", "--events=", NULL
	};

	for (int i = 0; own[i]; i++)
		if (!strncmp(arg, own[i], strlen(own[i])))
			return true;
	return false;
}

static int push(struct cluster_plan *p, const char *fmt, const char *v)
{
	char *s;

	if (asprintf(&s, fmt, v) < 0)
		return -1;
	p->args[p->nargs++] = s;
	return 0;
}

static int node_args(struct cluster_plan *p, const struct options *o)
{
	int bad = 0;

	p->args = calloc((size_t)o->argc + 8, sizeof(*p->args));
	if (!p->args)
		return -1;
	for (int i = 1; i < o->argc; i++)
		if (!coordinator_only(o->argv[i]))
			bad |= push(p, "%s", o->argv[i]);
	bad |= push(p, "--output=%s", p->output);
	bad |= push(p, "--node-copy=%s", o->slurm_job ? "-" : "{node}");
	if (o->nodes && !o->pid_list)
		bad |= push(p, "--pid=%s", "auto");
	if (o->commands)
		bad |= push(p, "--commands=%s", "-");
	if (o->events)
		bad |= push(p, "--events=%s", "json");
	return bad;
}

int cluster_plan_make(struct cluster_plan *p, const struct options *o)
{
	ssize_t n;

	memset(p, 0, sizeof(*p));
	p->names = calloc(CLUSTER_MAX_NODES, sizeof(*p->names));
	n = readlink("/proc/self/exe", p->self, sizeof(p->self) - 1);
	if (!p->names || n <= 0) {
		report_error("dynprof: %s", !p->names ? "out of memory" : "cannot read /proc/self/exe");
		return -1;
	}
	p->self[n] = '\0';
	if (output_prepare(o->output, p->output, sizeof(p->output)))
		return -1;
	if (o->slurm_job ? slurm_nodes(p, o->slurm_job) : listed_nodes(p, o->nodes))
		return -1;
	if (o->commands && read_commands(p, o->commands))
		return -1;
	if (node_args(p, o)) {
		report_error("dynprof: out of memory");
		return -1;
	}
	return 0;
}

void cluster_plan_free(struct cluster_plan *p)
{
	for (int i = 0; i < p->nargs; i++)
		free(p->args[i]);
	free(p->args);
	free(p->names);
	free(p->commands);
	memset(p, 0, sizeof(*p));
}

void cluster_plan_argv_free(char **argv)
{
	if (!argv)
		return;
	for (int i = 0; argv[i]; i++)
		free(argv[i]);
	free(argv);
}

/* s with every {node} replaced by node; malloc'd. */
static char *replace_node(const char *s, const char *node)
{
	size_t len = strlen(s) + 1, nlen = strlen(node);
	char *out, *w;

	for (const char *q = s; (q = strstr(q, "{node}")); q += 6)
		len += nlen;
	out = w = malloc(len);
	if (!out)
		return NULL;
	while (*s) {
		if (!strncmp(s, "{node}", 6)) {
			w = stpcpy(w, node);
			s += 6;
		} else
			*w++ = *s++;
	}
	*w = '\0';
	return out;
}

/* Append word to the shell line, in single quotes ('\'' for a quote). */
static char *append_quoted(char *line, const char *word)
{
	size_t len = strlen(line), need = len + 4 + 4 * strlen(word);
	char *grown = realloc(line, need), *w;

	if (!grown) {
		free(line);
		return NULL;
	}
	w = grown + len;
	*w++ = ' ';
	*w++ = '\'';
	for (; *word; word++) {
		if (*word == '\'')
			w = stpcpy(w, "'\\''");
		else
			*w++ = *word;
	}
	*w++ = '\'';
	*w = '\0';
	return grown;
}

static char **launcher_argv(const struct cluster_plan *p, const struct options *o, int index)
{
	const char *node = p->names[index];
	char **argv = calloc(4, sizeof(*argv));
	char *line = replace_node(o->launcher ? o->launcher : CLUSTER_DEFAULT_LAUNCHER, node);

	if (!argv || !line)
		goto nomem;
	line = append_quoted(line, p->self);
	for (int i = 0; line && i < p->nargs; i++) {
		char *word = replace_node(p->args[i], node);

		line = word ? append_quoted(line, word) : NULL;
		free(word);
	}
	argv[0] = strdup("sh");
	argv[1] = strdup("-c");
	argv[2] = line;
	if (!line || !argv[0] || !argv[1])
		goto nomem;
	return argv;
nomem:
	if (argv && !argv[2])
		free(line);
	cluster_plan_argv_free(argv);
	report_error("dynprof: out of memory");
	return NULL;
}

/* One srun step into the running job: one task on each of its nodes, stdin to all. */
static char **srun_argv(const struct cluster_plan *p, const struct options *o)
{
	char **argv = calloc((size_t)p->nargs + 16, sizeof(*argv));
	char *list = malloc((size_t)p->n * CLUSTER_NAME_MAX + 1), *w = list;
	int n = 0, bad = 0;

	if (!argv || !list)
		goto nomem;
	for (int i = 0; i < p->n; i++)
		w += sprintf(w, "%s%s", i ? "," : "", p->names[i]);
	bad |= asprintf(&argv[n++], "srun") < 0;
	bad |= asprintf(&argv[n++], "--jobid=%s", o->slurm_job) < 0;
	bad |= asprintf(&argv[n++], "--overlap") < 0;
	bad |= asprintf(&argv[n++], "--nodes=%d", p->n) < 0;
	bad |= asprintf(&argv[n++], "--ntasks=%d", p->n) < 0;
	bad |= asprintf(&argv[n++], "--ntasks-per-node=1") < 0;
	bad |= asprintf(&argv[n++], "--nodelist=%s", list) < 0;
	bad |= asprintf(&argv[n++], "--input=all") < 0;
	bad |= asprintf(&argv[n++], "--label") < 0;
	bad |= asprintf(&argv[n++], "--kill-on-bad-exit=0") < 0;
	bad |= asprintf(&argv[n++], "--wait=0") < 0;
	bad |= asprintf(&argv[n++], "%s", p->self) < 0;
	for (int i = 0; i < p->nargs; i++)
		bad |= !(argv[n++] = strdup(p->args[i]));
	if (bad)
		goto nomem;
	free(list);
	return argv;
nomem:
	free(list);
	cluster_plan_argv_free(argv);
	report_error("dynprof: out of memory");
	return NULL;
}

char **cluster_plan_argv(const struct cluster_plan *p, const struct options *o, int index)
{
	return index < 0 ? srun_argv(p, o) : launcher_argv(p, o, index);
}
