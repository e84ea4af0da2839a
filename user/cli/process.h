/* SPDX-License-Identifier: MIT */
/*
 * What every invocation of dynprof sets up around its mode, whichever the
 * mode: before the options are read (standard output by lines, room for
 * thousands of fds, the console's signals blocked) and once they are read
 * (the --events sink, the host's cgroup namespace).
 *
 * Errors: convention 3 of docs/ERRORS.md (-1, printed).
 */
#ifndef DYNPROF_PROCESS_H
#define DYNPROF_PROCESS_H

#include "config/options.h"
#include "shared/compiler.h"

/* First thing in main(), before any thread or window can exist. 0 or -1 (printed). */
int process_begin(void) DP_MUST_CHECK;
/* After the options are parsed, before the mode runs. 0 or -1 (printed). */
int process_ready(const struct options *o) DP_MUST_CHECK;
/* After the mode, when process_ready succeeded. */
void process_end(void);

#endif /* DYNPROF_PROCESS_H */
