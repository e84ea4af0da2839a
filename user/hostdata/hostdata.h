/* SPDX-License-Identifier: MIT */
/*
 * Host data of a window, collected by dynprof itself (--host-sys=osrt,cpu,mem,disk,network;
 * CANN is not asked for these): the target's system calls from the kernel
 * (osrt.h), per-thread cpu, memory, disk (/proc/<pid>/io) and network
 * (its namespace's /proc/net/dev) samples every 20 ms, written into the
 * window's folder in --output as msprof's host/data files (docs/HOSTDATA.md).
 *
 * The session calls, per target (host pid), target_join and _leave (they
 * keep its data for --host-sys-before, nothing without it), and per window
 * of it: open when the window opens, stop when it ends (before its folder is brought out), write
 * once the folder is in --output (also for a lost window: it frees what was
 * kept). A thread of its own reads the ring buffer every 10 ms and samples
 * every 20 ms, so collection does not wait on the session's loop; it never
 * prints: whatever goes wrong is said by join, open or write, on the
 * caller's thread.
 */
#ifndef DYNPROF_HOSTDATA_H
#define DYNPROF_HOSTDATA_H

#include <stdint.h>

#include "config/options.h"
#include "results/winaccount.h"

/*
 * Before any target connects: say what dynprof collects itself, and load
 * the BPF side for osrt, so a window's first calls are not lost to the
 * load (~0.1 s). Nothing when --host-sys asks dynprof for nothing.
 */
void hostdata_prepare(const struct options *o);

/*
 * --host-sys-before: keep pid's host data of the last DURATION from now on
 * (its system and pthread calls watched and probed from now, its samples
 * taken every 20 ms), until hostdata_target_leave. Nothing without it.
 */
void hostdata_target_join(int pid, const struct options *o);
void hostdata_target_leave(int pid);

/*
 * Start collecting what --host-sys asks dynprof for (nothing when it asks
 * for none). With --host-sys-before, the window's data begins DURATION
 * before since_mono (CLOCK_MONOTONIC ns: when its START was sent; 0: now),
 * taken from what was kept since the join.
 */
void hostdata_window_open(int pid, const struct options *o, uint64_t since_mono);

/* Stop collecting for pid's window (nothing when none is open). */
void hostdata_window_stop(int pid);

/*
 * Write pid's stopped window into each folder `a` lists (paths under
 * `output`), print its summary, count its losses in a->host_lost (the
 * caller makes the window "saved incomplete" when not 0), and forget it.
 */
struct events_close;
void hostdata_window_write(int pid, const char *output, struct window_account *a,
			   struct events_close *ev);

#endif /* DYNPROF_HOSTDATA_H */
