/* SPDX-License-Identifier: MIT */
/*
 * The files a process has mapped executable (the libraries it has loaded),
 * from /proc/<pid>/maps. Two ways, one answer: the PROCMAP_QUERY ioctl on
 * that file (Linux 6.11+), where the kernel skips the other mappings and
 * formats nothing but the path, and the text, which costs the kernel a
 * formatted line for every mapping and comes one page per read (a big AI
 * process has thousands: docs/BENCHMARKS.md, "Issue 24's goals"),
 * each line parsed as kernel/libmaps.h parses it.
 */
#ifndef DYNPROF_PROCMAPS_H
#define DYNPROF_PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>

#include "shared/compiler.h"

/*
 * One executable file mapping's path, " (deleted)" dropped; a file may
 * come more than once. True to go on, false when the caller knows enough
 * (the walk ends there, as if the mappings ended).
 */
typedef bool (*procmaps_file_fn)(const char *path, void *arg);

/*
 * Each executable file mapping of `pid`, in address order: the ioctl
 * where the kernel has it, else the text (then `fn` may see again files
 * the ioctl gave before it stopped). 0, -ESRCH when the process is gone,
 * or another negative errno.
 */
int procmaps_exec_files(int pid, procmaps_file_fn fn, void *arg) DP_MUST_CHECK;

/* The ioctl alone: -ENOTTY when the text must be read instead (an older kernel, a path past PATH_MAX). */
int procmaps_exec_files_query(int pid, procmaps_file_fn fn, void *arg) DP_MUST_CHECK;

/* The text alone (every kernel). */
int procmaps_exec_files_text(int pid, procmaps_file_fn fn, void *arg) DP_MUST_CHECK;

#endif /* DYNPROF_PROCMAPS_H */
