/* SPDX-License-Identifier: MIT */
/*
 * Host data of a window, collected by dynprof itself (--host-sys=osrt,cpu,mem;
 * CANN is not asked for these): the target's system calls from the kernel
 * (osrt.h), per-thread cpu and memory samples every 20 ms, written into the
 * window's folder in --output as msprof's host/data files (docs/HOSTDATA.md).
 *
 * The session calls, per window of a target (host pid): open when the
 * window opens, stop when it ends (before its folder is brought out), write
 * once the folder is in --output (also for a lost window: it frees what was
 * kept). A thread of its own reads the ring buffer every 10 ms and samples
 * every 20 ms, so collection does not wait on the session's loop; it never
 * prints: whatever goes wrong is said by write, on the caller's thread.
 */
#ifndef DYNPROF_HOSTDATA_H
#define DYNPROF_HOSTDATA_H

#include "config/options.h"
#include "results/winaccount.h"

/*
 * Before any target connects: say what dynprof collects itself, and load
 * the BPF side for osrt, so a window's first calls are not lost to the
 * load (~0.1 s). Nothing when --host-sys asks dynprof for nothing.
 */
void hostdata_prepare(const struct options *o);

/* Start collecting what --host-sys asks dynprof for (nothing when it asks for none). */
void hostdata_window_open(int pid, const struct options *o);

/* Stop collecting for pid's window (nothing when none is open). */
void hostdata_window_stop(int pid);

/*
 * Write pid's stopped window into each folder `a` lists (paths under
 * `output`), print its summary, count its losses in a->host_lost (the
 * caller makes the window "saved incomplete" when not 0), and forget it.
 */
void hostdata_window_write(int pid, const char *output, struct window_account *a);

#endif /* DYNPROF_HOSTDATA_H */
