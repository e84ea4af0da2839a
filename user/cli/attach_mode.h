/* SPDX-License-Identifier: MIT */
/*
 * Attach mode: `dynprof --pid=N[,N...]|auto [switches]`. The targets are
 * the processes reached at start (--pid=auto: every card user whose
 * socket listens); none joins later. The kernel tells their exits; the
 * run ends on quit, a signal, the end of input, when no target is left,
 * or (with --window rules) when every rule is done.
 */
#ifndef DYNPROF_ATTACH_MODE_H
#define DYNPROF_ATTACH_MODE_H

#include "config/options.h"
#include "shared/compiler.h"

/*
 * Run attach mode; returns dynprof's exit status (0 after quit, 1 when no
 * target is left, 128+N after signal N, EXIT_OPTION_ERROR when no target
 * could be reached).
 */
int attach_mode_run(const struct options *o) DP_MUST_CHECK;

#endif /* DYNPROF_ATTACH_MODE_H */
