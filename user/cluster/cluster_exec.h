/* SPDX-License-Identifier: MIT */
/*
 * Running the scheduler's and the launcher's commands for a whole cluster
 * job (cluster/cluster.c, cluster/node_copy.c): a command's output captured, or a
 * command started with its standard input and output on pipes.
 *
 * Errors: convention 1 of docs/ERRORS.md (negative errno; the caller prints).
 */
#ifndef DYNPROF_CLUSTER_EXEC_H
#define DYNPROF_CLUSTER_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "shared/compiler.h"

/*
 * Run argv (searched in PATH) with no input, its standard output read
 * into buf (NUL-terminated, at most len - 1 bytes kept), its standard
 * error into err (may be NULL). Returns its exit status (0..255, 128+N
 * after signal N), or a negative errno when it could not run; killed
 * after timeout_ms.
 */
int cluster_capture(char *const argv[], char *buf, size_t len, char *err, size_t errlen,
		    int timeout_ms) DP_MUST_CHECK;

struct cluster_child {
	pid_t pid; /* also its process group: signals go to the group */
	int in;    /* its standard input (write end), -1 once closed */
	int out;   /* its standard output (read end) */
	int err;   /* its standard error (read end), -1 when merged into out */
};

/*
 * Start argv in a process group of its own (a Ctrl-C on the terminal
 * reaches only dynprof, which decides what the nodes get), with pipes for
 * its standard input and output; merge_err: standard error into the same
 * pipe. The signals dynprof blocks are unblocked in the child. 0 or a
 * negative errno.
 */
int cluster_spawn(char *const argv[], bool merge_err, struct cluster_child *c) DP_MUST_CHECK;

#endif /* DYNPROF_CLUSTER_EXEC_H */
