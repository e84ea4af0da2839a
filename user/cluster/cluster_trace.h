/* SPDX-License-Identifier: MIT */
/*
 * --trace=on with --slurm-job or --nodes: once every node ended, the
 * traces the nodes' copies wrote in --output/<node>/ in this run, merged
 * into one, <output>/<coordinator pid>_dynprof_trace.json, on the
 * coordinator's CLOCK_MONOTONIC through each node's CLOCK_REALTIME anchor
 * (docs/TRACE.md). Says what it merged, and which nodes' traces it did
 * not find (--output not on a filesystem the nodes share).
 */
#ifndef DYNPROF_CLUSTER_TRACE_H
#define DYNPROF_CLUSTER_TRACE_H

#include <stdint.h>

#include "cluster/cluster_plan.h"
#include "config/options.h"

/* since_wall_us: the run's start (CLOCK_REALTIME µs): older traces in a node's folder are not this run's. */
void cluster_trace_merge(const struct options *o, const struct cluster_plan *p, int64_t since_wall_us);

#endif /* DYNPROF_CLUSTER_TRACE_H */
