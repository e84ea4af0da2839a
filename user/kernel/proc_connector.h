/* SPDX-License-Identifier: MIT */
/*
 * The netlink process connector (cn_proc): the kernel's fork, exec and exit
 * notices for every process on the host, without BPF. The tracker uses it
 * when BPF cannot be used, so the model learns of processes at once rather
 * than at the next /proc poll. It says nothing of open files (card opens
 * are still found by polling), and its events carry pids only: no start
 * time, comm, filename or argv. procmodel_apply() reads those from /proc
 * for events with start_ns 0 (see procmodel.h).
 *
 * It needs CAP_NET_ADMIN, the initial network namespace (the connector
 * exists only there) and the initial pid and user namespaces (the kernel
 * silently ignores listeners from others).
 */
#ifndef DYNPROF_PROC_CONNECTOR_H
#define DYNPROF_PROC_CONNECTOR_H

#include "dynprof/events.h"
#include "shared/compiler.h"

struct proc_connector;

/*
 * Subscribe to the process events: 0 and *out set, or a negative errno:
 * -EPERM (no CAP_NET_ADMIN), -EPROTONOSUPPORT (kernel without the
 * connector, or a network namespace other than the host's), -ETIMEDOUT
 * (the kernel did not confirm: a pid or user namespace other than the
 * host's), -ENOMEM, -EMFILE, ... proc_connector_strerror() explains them.
 */
int proc_connector_open(struct proc_connector **out) DP_MUST_CHECK;

/* Unsubscribe (the kernel keeps sending while anyone listens) and close. */
void proc_connector_close(struct proc_connector *c);

/* The fd to poll for POLLIN; then call proc_connector_consume(). */
int proc_connector_fd(const struct proc_connector *c);

/*
 * Deliver the pending events, in order, as struct dp_event (whole, unused
 * fields zero): FORK of new processes (not threads), EXEC, EXIT of thread
 * group leaders. pid is the tgid, ppid (FORK) the parent's tgid, tid the
 * thread; start_ns 0. Never blocks; reads a bounded number of messages per
 * call (the fd stays readable for the rest). Returns the number delivered
 * or a negative errno. A growth of proc_connector_lost() afterwards means
 * the kernel dropped messages (socket buffer full) and the caller must
 * rescan /proc.
 */
int proc_connector_consume(struct proc_connector *c,
			   void (*on_event)(void *ctx, const struct dp_event *e), void *ctx) DP_MUST_CHECK;

/* Times the kernel reported dropped messages (ENOBUFS). */
unsigned long long proc_connector_lost(const struct proc_connector *c);

/* A short reason for an error of proc_connector_open (static storage). */
const char *proc_connector_strerror(int err);

#endif /* DYNPROF_PROC_CONNECTOR_H */
