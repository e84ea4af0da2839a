/* SPDX-License-Identifier: MIT */
/*
 * The coordinator of a whole cluster job: `--slurm-job=J` (the job's
 * nodes from SLURM, one srun step with one task per node) or
 * `--nodes=LIST` (one launcher command per node, --launcher='ssh {node}').
 * On each node runs dynprof's node copy (cluster/node_copy.h) with the same
 * switches and rules. Console lines and a --commands file reach every
 * node; a console `start` becomes `start at:T` with one T for all nodes
 * (now + --sync-margin). Each node's lines are printed with its name;
 * SIGINT, SIGTERM and SIGHUP are passed on as SIGTERM, so every node
 * stops its windows. One summary at the end, per node.
 */
#ifndef DYNPROF_CLUSTER_H
#define DYNPROF_CLUSTER_H

#include "config/options.h"
#include "shared/compiler.h"

/* Exit status: 0 every node ended 0; 1 some node failed (named); 128+N after signal N; 255 option errors. */
int cluster_run(const struct options *o) DP_MUST_CHECK;

#endif /* DYNPROF_CLUSTER_H */
