/* SPDX-License-Identifier: MIT */
/*
 * msprof's interactive console: commands from a terminal (with the "> "
 * prompt) or, when standard input is not a terminal, one per line from it
 * (a script; end of input means quit). While idle it also watches the
 * targets (unsolicited DISCONNECT, exits) and SIGINT/SIGTERM/SIGHUP, which
 * stop every open window before dynprof exits.
 */
#ifndef DYNPROF_CONSOLE_H
#define DYNPROF_CONSOLE_H

#include "kernel/discover.h"
#include "session/session.h"
#include "shared/compiler.h"

/* Block the signals the console handles; call first thing in main(). */
int console_block_signals(void) DP_MUST_CHECK;

/* A signalfd for those signals (SIGINT, SIGTERM, SIGHUP), or -errno. */
int console_signalfd(void) DP_MUST_CHECK;

/* One of those signals pending (taken, so it is not seen twice), or 0. */
int console_take_signal(void);

struct tracker;
struct launch;
struct triggers;
struct script;
struct remote;

/* What the console watches besides its input and the targets. */
struct console_sources {
	struct discover *disc;   /* attach mode: target exits (may be NULL) */
	struct tracker *tracker; /* launch mode: the application's tree */
	struct launch *app;      /* launch mode: the application */
	bool no_input;           /* the application owns standard input: read no commands */
	void (*on_tick)(void *ctx); /* called after every poll round (may be NULL) */
	void *tick_ctx;
	struct triggers *triggers; /* --window rules and waits (may be NULL) */
	struct script *commands;   /* --commands (may be NULL): replaces standard input */
	struct remote *remote;     /* --control clients (may be NULL) */
	bool *quit_requested;      /* set by a script's `quit` (may be NULL) */
	/*
	 * Launch mode: how many processes of the application's tree still
	 * live once the application itself has exited (workers it detached,
	 * `setsid -f`); the run goes on until it is 0. NULL: the
	 * application's exit ends the run.
	 */
	int (*tree_alive)(void *tick_ctx);
	/*
	 * Follow mode: targets come and go, so the run ends only on quit or a
	 * signal: not when no target is left, at the end of standard input or
	 * of --commands, nor when every rule is done (later joiners take them).
	 */
	bool follow;
};

/*
 * Run the console until quit, end of input, a signal, or no target left
 * (attach mode) / the application's exit (launch mode; with tree_alive,
 * the exit of the last process of its tree). With --window
 * rules, end of input (or of the --commands file) does not end the run:
 * it goes on until every rule is done on every target (attach mode).
 * Returns dynprof's exit status: 0 quit, 1 no target left, 128+N signal N;
 * in launch mode the caller then waits for the application.
 */
int console_run(struct session *s, const struct console_sources *src) DP_MUST_CHECK;

#endif /* DYNPROF_CONSOLE_H */
