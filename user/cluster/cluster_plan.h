/* SPDX-License-Identifier: MIT */
/*
 * What a cluster coordinator (cluster/cluster.h) runs: the nodes (from SLURM
 * for --slurm-job, else --nodes), the node copy's command line (this
 * dynprof with the user's switches and rules, --output made absolute,
 * --node-copy added, a --commands file sent on standard input), and the
 * command that starts it: one srun step over the job's nodes, or one
 * launcher command per node.
 *
 * Errors: convention 3 of docs/ERRORS.md (printed, then -1).
 */
#ifndef DYNPROF_CLUSTER_PLAN_H
#define DYNPROF_CLUSTER_PLAN_H

#include <limits.h>
#include <stddef.h>

#include "config/options.h"
#include "shared/compiler.h"

#define CLUSTER_MAX_NODES 4096
#define CLUSTER_NAME_MAX 64
#define CLUSTER_DEFAULT_LAUNCHER "ssh {node}"

struct cluster_plan {
	char (*names)[CLUSTER_NAME_MAX]; /* the nodes, in SLURM's order */
	int n;
	char output[PATH_MAX]; /* absolute: each node writes under output/<node> */
	char self[PATH_MAX];   /* this dynprof (the same path on every node) */
	char **args;           /* the node copy's options after argv[0], NULL-terminated */
	int nargs;
	char *commands; /* the --commands file's text (sent on standard input), or NULL */
	size_t commands_len;
};

/* Nodes, folders and the node copy's command line. 0 or -1 (printed). */
int cluster_plan_make(struct cluster_plan *p, const struct options *o) DP_MUST_CHECK;
void cluster_plan_free(struct cluster_plan *p);

/* The job's state now (RUNNING, CANCELLED, ...) into state. 0, or -1 when scontrol does not say. */
int cluster_plan_job_state(const char *job, char *state, size_t len) DP_MUST_CHECK;

/*
 * For unit tests: the first line of `squeue --format="%T %N"` (a state of
 * capitals and '_', then a node list, empty for a pending job): 0 with
 * both set, -EINVAL when the line is anything else.
 */
int cluster_plan_parse_queue(const char *out, char *state, size_t slen, char *nodes, size_t nlen);

/*
 * The command to start: srun over every node (index < 0), or node i's
 * launcher command (`sh -c` over the template with {node} replaced, then
 * the node copy's words quoted). malloc'd, NULL-terminated, freed with
 * cluster_plan_argv_free; NULL when out of memory (printed).
 */
char **cluster_plan_argv(const struct cluster_plan *p, const struct options *o, int index);
void cluster_plan_argv_free(char **argv);

#endif /* DYNPROF_CLUSTER_PLAN_H */
