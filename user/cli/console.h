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
struct triggers;
struct script;
struct remote;

/*
 * What a mode decides of the console's run, set once by the mode
 * (cli/run.h): the console asks this, never which mode it is in. Every
 * hook may be NULL and gets the ctx of struct console_sources.
 */
struct console_mode {
	const char *name; /* the mode `status` shows: "attach", "launch" or "follow" */
	/*
	 * The targets are the ones reached at start, none joins later
	 * (attach): the run ends when none is left or when every --window
	 * rule is done, and commands are read only while some target lives.
	 */
	bool fixed_targets;
	/*
	 * Targets come and go (follow): the end of standard input or of
	 * --commands does not end the run, only quit or a signal does.
	 */
	bool endless;
	bool no_input; /* the application owns standard input: read no commands */
	/* One more fd whose readiness wakes the console (-1: none now). */
	int (*wake_fd)(void *ctx);
	/*
	 * Asked every round while the run goes on: true when the mode ends the
	 * run (launch: the application, or the last process of its tree,
	 * exited), with the exit status in *status.
	 */
	bool (*ended)(void *ctx, int *status);
	/* After every poll round: joins, notices. */
	void (*on_tick)(void *ctx);
	/* Signal sig came and the windows are closed (launch: pass it on). */
	void (*signalled)(void *ctx, int sig);
};

/* What the console watches besides its input and the targets. */
struct console_sources {
	const struct console_mode *mode; /* never NULL */
	void *ctx;                       /* the mode's hooks' */
	struct discover *disc;           /* target exits (may be NULL) */
	struct tracker *tracker;         /* the process model's feed (may be NULL) */
	struct triggers *triggers;       /* --window rules and waits (may be NULL) */
	struct script *commands;         /* --commands (may be NULL): replaces standard input */
	struct remote *remote;           /* --control clients (may be NULL) */
	bool *quit_requested;            /* set by a script's `quit` (may be NULL) */
};

/*
 * Run the console until quit, end of input, a signal, no target left (a
 * mode with fixed targets) or the mode's end (its `ended`). With
 * --window rules, end of input (or of the --commands file) does not end
 * the run: it goes on until every rule is done on every target (fixed
 * targets). Returns dynprof's exit status: 0 quit, 1 no target left,
 * 128+N signal N, or the one `ended` gave.
 */
int console_run(struct session *s, const struct console_sources *src) DP_MUST_CHECK;

#endif /* DYNPROF_CONSOLE_H */
