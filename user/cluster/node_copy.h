/* SPDX-License-Identifier: MIT */
/*
 * One node's copy of dynprof under a coordinator (cluster/cluster.c), started
 * by srun or a launcher with the hidden option --node-copy=NAME ("-": the
 * name from $SLURMD_NODENAME, else the host name). It is plain attach
 * mode with three differences:
 *
 * - Targets: with --slurm-job=J, the job's processes on this node
 *   (`scontrol listpids J`) that hold a card and serve a listening socket,
 *   waited for up to --node-wait (workers may still be starting); else
 *   --pid as given (--pid=auto: every card user of the node).
 * - Results under --output/NAME; everything it prints goes to standard
 *   output (the coordinator reads one stream per node), framed by the
 *   lines "@dynprof-node NAME hello" and "@dynprof-node NAME exit=S", and
 *   it ends once the coordinator acknowledged the exit frame by ending its
 *   input (a launcher's at once; srun's once every node is done), or 5 s
 *   after it.
 * - Its console takes "start at:TIME" (TIME as at:'s, e.g. @EPOCH.mmm):
 *   the window opens at that wall-clock time, the same on every node.
 */
#ifndef DYNPROF_NODE_COPY_H
#define DYNPROF_NODE_COPY_H

#include "config/options.h"
#include "shared/compiler.h"

/* The frame's prefix: a coordinator matches it at the start of a line. */
#define NODE_COPY_TAG "@dynprof-node "

/* Run the node copy (attach mode, cli/attach_mode.h). Returns dynprof's exit status. */
int node_copy_run(struct options *o) DP_MUST_CHECK;

#endif /* DYNPROF_NODE_COPY_H */
