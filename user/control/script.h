/* SPDX-License-Identifier: MIT */
/*
 * A command script: the --commands file, or the lines one --control client
 * sends. Commands run in order; `sleep` and `wait` hold the ones after
 * them while the console goes on (targets, triggers and other scripts are
 * served meanwhile). Each finished command can be acknowledged.
 *
 * Errors: script_load_file follows convention 3 of docs/ERRORS.md (printed).
 */
#ifndef DYNPROF_SCRIPT_H
#define DYNPROF_SCRIPT_H

#include <stdbool.h>
#include <stddef.h>

#include "config/rule.h"
#include "control/status.h"
#include "session/session.h"
#include "trigger/triggers.h"
#include "shared/compiler.h"

struct script;

struct script_host {
	struct session *s;
	struct triggers *tg;
	bool *quit_requested; /* `quit` sets it: the console ends the run (stopping every window) */
	/*
	 * `events`: make the script's client a stream of events, called with
	 * the script's reply_ctx. 0, or -1 with err. NULL: no client can
	 * stream (the --commands file), refused as the FIFO is.
	 */
	int (*stream)(void *reply_ctx, char *err, size_t errlen);
	status_stats_fn stats; /* `status`: what the layers above know (may be NULL) */
	void *stats_ctx;
};

/* Called when a command is done ("ack start") or refused ("error: ..."). */
typedef void (*script_reply_fn)(void *ctx, const char *text);

struct script *script_new(const struct script_host *host, script_reply_fn reply, void *reply_ctx);
void script_free(struct script *sc);

/* Serve another session / engine (a script is loaded before they exist). */
void script_set_host(struct script *sc, const struct script_host *host);
/* Where `status` gets the numbers of the layers above (kept by script_set_host). */
void script_set_stats(struct script *sc, status_stats_fn fn, void *ctx);

/*
 * Carry out a start, stop, quit or status command now (the console runs
 * its commands through this too). start/stop/quit without a selector, or
 * with `all`: the whole session, as msprof's console (quit sets
 * *quit_requested); with one, the targets it matches now only, and `quit
 * SEL` dismisses them (session_dismiss). status sends its lines to `line`.
 * 0, or -1 with the reason in err ("no target matches pid=12").
 */
int script_run_command(const struct script_host *h, const struct script_cmd *cmd,
		       status_line_fn line, void *ctx, char *err, size_t errlen) DP_MUST_CHECK;

/*
 * Read and parse a whole --commands file ("-": standard input) before
 * anything starts. 0, or -1 after printing "FILE:LINE: what is wrong"
 * (a line holding a NUL byte is refused, as --control refuses it).
 */
int script_load_file(struct script *sc, const char *path) DP_MUST_CHECK;

/* The conditions the script waits on (to register with the trigger engine). */
int script_conditions(const struct script *sc, const struct condition **out, int max);

/*
 * Parse one line and queue it; a bad line is answered with "error: ..." at
 * once. After `events` has run, lines are ignored: the client streams.
 */
void script_push_line(struct script *sc, const char *line);

/* Run queued commands until one has to wait or none is left. */
void script_step(struct script *sc);
/* ms until the running sleep ends or the running wait is checked again (-1: neither). */
int script_timeout_ms(const struct script *sc);
/* Nothing queued or running. */
bool script_idle(const struct script *sc);
/* A quit under way whose reply waits for the windows' fates (its run ends once it is answered). */
bool script_quitting(const struct script *sc);

#endif /* DYNPROF_SCRIPT_H */
