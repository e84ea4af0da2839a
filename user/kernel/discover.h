/* SPDX-License-Identifier: MIT */
/*
 * Kernel events about processes. Attach mode: the moment a watched
 * process exits. Tracking mode (below): every process's lifecycle and
 * card opens, for the process model.
 *
 * With BPF (bpf/discover.bpf.c, a raw tracepoint on sched_process_exit
 * filtered in the kernel by a map of watched pids) events arrive through a
 * ring buffer. Without it (not root, no BTF, BPF locked down, --no-bpf) the
 * same calls work on pidfds. Either way the caller polls one fd.
 *
 * Errors: convention 1 of docs/ERRORS.md; the opens say why BPF is not
 * used in `*note` (convention 2).
 */
#ifndef DYNPROF_DISCOVER_H
#define DYNPROF_DISCOVER_H

#include <stdbool.h>

#include "dynprof/events.h"
#include "shared/compiler.h"

struct discover;

/*
 * Open the watcher. With use_bpf, try BPF first; when it cannot be used,
 * `*note` points to a one-line reason (static storage, overwritten by the
 * next discover_open) and the pidfd fallback is used; otherwise `*note` is
 * NULL. Returns NULL only when memory or fds run out (errno set).
 * While the BPF programs load and while they are in use, libbpf's
 * messages go to a quiet handler, not to stderr.
 */
struct discover *discover_open(bool use_bpf, const char **note);
void discover_close(struct discover *d);

/* true when the BPF programs are loaded and attached. */
bool discover_uses_bpf(const struct discover *d);

/*
 * Watch / stop watching a host pid (a process, i.e. a thread group id).
 * 0 or negative errno: -ESRCH the process is gone or already exited (a
 * zombie counts as exited), -EINVAL not a thread group leader, -ENOSPC
 * DP_MAX_WATCHED reached, -ENOSYS no pidfd_open (Linux < 5.3, no BPF).
 * Watching a pid twice is one watch.
 */
int discover_watch(struct discover *d, int pid) DP_MUST_CHECK;
void discover_unwatch(struct discover *d, int pid);

/* One fd to poll for POLLIN; then call discover_consume(). */
int discover_fd(const struct discover *d);

/*
 * Calls on_exit(ctx, pid) for each watched pid that exited, once, and stops
 * watching it. Never blocks. Returns the number of calls or negative errno.
 * on_exit may call discover_watch/unwatch.
 * "Exited" differs by mode in when, not whether: with BPF, as soon as the
 * last thread enters do_exit(), before the kernel has released the
 * process's memory and files (its sockets may still be open for a while:
 * ~0.3 s for a 4 GiB process here); with pidfds, once it is a zombie.
 */
int discover_consume(struct discover *d, void (*on_exit)(void *ctx, int pid), void *ctx) DP_MUST_CHECK;

/* BPF events dropped because the ring buffer was full (0 without BPF). */
unsigned long long discover_lost_events(const struct discover *d);

/* ---- tracking mode: every process, for the process model (--list, --pid=auto) ----
 *
 * In tracking mode the BPF programs report, for every process on the host:
 * FORK (new processes, not threads), EXEC (filename and argv), EXIT (last
 * thread), and CARD_OPEN / CARD_CLOSE for fds on the card nodes registered
 * with discover_add_card() (filtered in the kernel by the opened file's
 * device number, so relative paths, symlinks and nodes made inside
 * containers count too). Without BPF, tracking mode reports nothing: the
 * process model then polls /proc itself (see procmodel.h).
 *
 * What the events do not say, and the model must fill in from /proc:
 *  - a forked child holds its parent's card fds (no CARD_OPEN for them);
 *  - exec closes O_CLOEXEC fds, dup2/dup3/close_range close fds, all
 *    without CARD_CLOSE: re-read /proc/<pid>/fd of a card holder on EXEC;
 *  - CARD_CLOSE is one fd: another fd (a dup, another open) may still hold
 *    the card; re-read /proc/<pid>/fd on CARD_CLOSE too;
 *  - an EXIT may come twice (threads dying together): drop the second by
 *    pid + start_ns.
 * CARD_CLOSE comes for every close() of a card fd by a process that opened
 * a card or was forked by one (fds inherited or dup'ed included).
 *
 * When the fd polls readable: at once for card opens and closes, for the
 * fork, exec and exit of card holders, and for watched pids' exits. Other
 * processes' fork/exec/exit wake nobody (waking the reader per event cost
 * 15% on a fork-heavy load): they arrive with the next event that wakes,
 * when the ring is a quarter full, or at the caller's own timed call, so
 * call discover_consume_events() at least every ~100 ms. Events are
 * delivered in the order they happened, whichever call delivers them.
 *
 * discover_watch() works on a tracking handle too; discover_consume_events()
 * then delivers a watched pid's exit as an EXIT event and ends the watch.
 * (discover_consume() on a tracking handle would drop all other events.)
 */
/*
 * Card opens are seen, in this order, by the first that loads and attaches:
 *  1. the device permission check: a cgroup/dev program on the cgroup v2
 *     root, linked (gone with dynprof however it ends), no cost per
 *     syscall. Its CARD_OPEN events come before the open is done and may
 *     be for an open that then fails: fd == DP_FD_UNCONFIRMED, no path;
 *     the caller confirms them from /proc (model/opencheck.c). No
 *     CARD_CLOSE events: the caller re-reads card holders' fds.
 *  2. the syscall tracepoints sys_enter/sys_exit: CARD_OPEN after the open
 *     succeeded (fd and path set) and CARD_CLOSE, at a cost to every
 *     syscall of every process. Chosen when 1 fails, or forced by the
 *     environment variable DYNPROF_OPEN_HOOK=syscalls.
 * discover_open_hook() says which, in one line.
 * (`*note`, when BPF cannot be used, is the reason alone: "BPF unavailable (...)".)
 */
struct discover *discover_open_tracking(bool use_bpf, const char **note);

/*
 * Register a card node's device number and index (the index events carry):
 * 0, or -EINVAL (not a tracking handle, index < 0), -ERANGE (beyond the
 * kernel's 12-bit major / 20-bit minor), -ENOSPC (DP_MAX_CARD_DEVS
 * reached). Registering a device again replaces its index. Without BPF: 0.
 * Opens before the registration are not reported: scan /proc after it.
 */
/*
 * Tracking handle with BPF: "card opens: cgroup device hook", or "card
 * opens: syscall tracepoints (cgroup device hook: <why not>)"; it lives as
 * long as d. NULL otherwise. `*closes`: CARD_CLOSE events come (the
 * syscall hooks only).
 */
const char *discover_open_hook(const struct discover *d, bool *closes);

int discover_add_card(struct discover *d, unsigned major, unsigned minor, int index) DP_MUST_CHECK;

/*
 * Deliver every pending event, in order, to on_event, each as a whole
 * struct dp_event (fields a type does not use are zero). Never blocks.
 * Returns the number delivered or a negative errno. After it, check
 * discover_lost_events(): a growth means events were lost and the caller
 * must rescan /proc. Without BPF: 0.
 */
int discover_consume_events(struct discover *d, void (*on_event)(void *ctx, const struct dp_event *e),
			    void *ctx) DP_MUST_CHECK;

#endif /* DYNPROF_DISCOVER_H */
