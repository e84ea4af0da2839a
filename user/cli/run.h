/* SPDX-License-Identifier: MIT */
/*
 * The run every profiling mode shares (attach, launch, follow), written
 * once: the automation (--window, --commands, --control) prepared and
 * checked, the output folder made, the session opened with what tells of
 * its targets' changes, the engine started, the console run, the
 * session's summary, the exit status. A mode is a configuration of it
 * (struct run_mode): how its session opens and its targets are found or
 * joined, what starts once the engine runs, what the console asks it
 * (struct console_mode: each round's joins, when the run ends) and its
 * exit status.
 */
#ifndef DYNPROF_RUN_H
#define DYNPROF_RUN_H

#include "cli/automation.h"
#include "cli/console.h"
#include "config/options.h"
#include "session/session.h"
#include "shared/compiler.h"

struct discover;
struct tracker;

/* The run the hooks are handed; run_mode_run closes what open and watch set. */
struct run {
	const struct options *o;
	const char *output;      /* the output folder, made */
	struct automation *a;    /* prepared; started after watch, before begin */
	struct session *s;       /* open opens it (NULL until then) */
	struct discover *disc;   /* target exits, if the mode watches them (open sets it) */
	struct tracker *tracker; /* the process model, if the mode has one (watch sets it) */
};

/*
 * A mode. Hooks get the ctx given to run_mode_run; those marked so may be
 * NULL. Those returning int return 0 or -1 after printing why.
 */
struct run_mode {
	struct console_mode console;
	/* After the automation is prepared, before anything else (may be NULL). */
	int (*check)(const struct automation *a, const struct options *o);
	/* Open r->s: the session. It can be closed afterwards whatever this returns. */
	int (*open)(void *ctx, struct run *r);
	/* Open what tells of the targets' changes (may be NULL). */
	int (*watch)(void *ctx, struct run *r);
	/* Once the engine runs, before the console: an application, the first joins (may be NULL). */
	int (*begin)(void *ctx, struct run *r);
	/* After the console: the run's exit status from the console's (may be NULL: the console's). */
	int (*finish)(void *ctx, struct run *r, int status);
	/* The exit status when the run could not start (may be NULL: EXIT_OPTION_ERROR). */
	int (*failed)(void *ctx);
	/* Last, before the session closes: free what the mode holds (may be NULL). */
	void (*close)(void *ctx, struct run *r);
};

/* Run mode m with o; returns dynprof's exit status. */
int run_mode_run(const struct options *o, const struct run_mode *m, void *ctx) DP_MUST_CHECK;

#endif /* DYNPROF_RUN_H */
