/* SPDX-License-Identifier: MIT */
/*
 * Launch mode: `dynprof --dynamic=on [--output=DIR] [switches] APP ARGS...`
 * (or --application="APP ARGS"). The application is started with
 * PROFILING_MODE=dynamic; its whole descendant tree is followed from the
 * kernel; every descendant that holds a card and whose socket listens
 * joins the session as a target, and the session's window follows the
 * console's start/stop whenever a target joins.
 */
#ifndef DYNPROF_LAUNCH_MODE_H
#define DYNPROF_LAUNCH_MODE_H

#include "config/options.h"
#include "shared/compiler.h"

/* Run launch mode; returns dynprof's exit status (the application's). */
int launch_mode_run(const struct options *o) DP_MUST_CHECK;

#endif /* DYNPROF_LAUNCH_MODE_H */
