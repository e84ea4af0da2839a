/* SPDX-License-Identifier: MIT */
/*
 * A process's command line as ps and pgrep -f show it. dynprof's helper
 * processes (the watchdog) are copies of dynprof: without a title of their
 * own, `pkill -f dynprof` or a script signalling "dynprof" would hit them
 * too. Only system calls and no allocation: callable in a child made by a
 * raw clone of a threaded process.
 */
#ifndef DYNPROF_COMMON_PROCTITLE_H
#define DYNPROF_COMMON_PROCTITLE_H

#include "shared/compiler.h"

/*
 * Make `title` this process's command line, written over its arguments and,
 * when longer, its environment (which it must not read afterwards): cut
 * to fit those. For a child that will not exec. 0, or a negative errno
 * (the command line unchanged).
 */
int proctitle_set(const char *title) DP_MUST_CHECK;

#endif /* DYNPROF_COMMON_PROCTITLE_H */
