/* SPDX-License-Identifier: MIT */
/*
 * Kernel events about targets: the moment a watched process exits.
 *
 * With BPF (bpf/discover.bpf.c, a raw tracepoint on sched_process_exit
 * filtered in the kernel by a map of watched pids) events arrive through a
 * ring buffer. Without it (not root, no BTF, BPF locked down, --no-bpf) the
 * same calls work on pidfds. Either way the caller polls one fd.
 */
#ifndef DYNPROF_DISCOVER_H
#define DYNPROF_DISCOVER_H

#include <stdbool.h>

struct discover;

/*
 * Open the watcher. With use_bpf, try BPF first; when it cannot be used,
 * `*note` points to a one-line reason (static storage) and the pidfd
 * fallback is used. Returns NULL only on allocation failure.
 */
struct discover *discover_open(bool use_bpf, const char **note);
void discover_close(struct discover *d);

/* true when the BPF programs are loaded and attached. */
bool discover_uses_bpf(const struct discover *d);

/* Watch / stop watching a host pid. 0 or negative errno (-ESRCH: gone). */
int discover_watch(struct discover *d, int pid);
void discover_unwatch(struct discover *d, int pid);

/* One fd to poll for POLLIN; then call discover_consume(). */
int discover_fd(const struct discover *d);

/* Calls on_exit(ctx, pid) for each watched pid that exited. */
int discover_consume(struct discover *d, void (*on_exit)(void *ctx, int pid), void *ctx);

#endif /* DYNPROF_DISCOVER_H */
