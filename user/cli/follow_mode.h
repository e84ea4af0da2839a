/* SPDX-License-Identifier: MIT */
/*
 * Follow mode: `dynprof --pid=auto --follow [--container=ID|NAME ...]
 * [--user=U ...] [--exe=GLOB ...]`. Every process of the host or of any
 * of its containers that holds a card and whose socket listens joins the
 * session when the kernel tells (or at start, when it is already there),
 * if the filters take it (match_filters); it leaves when it exits
 * or execs, and a new process joins again. A process dismissed by
 * `quit SEL` is not taken again. The run ends only on quit or a signal.
 */
#ifndef DYNPROF_FOLLOW_MODE_H
#define DYNPROF_FOLLOW_MODE_H

#include "config/options.h"
#include "shared/compiler.h"

/* Run follow mode; returns dynprof's exit status (0 after quit, 128+N after signal N). */
int follow_mode_run(const struct options *o) DP_MUST_CHECK;

#endif /* DYNPROF_FOLLOW_MODE_H */
