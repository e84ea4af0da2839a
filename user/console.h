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

#include "discover.h"
#include "session.h"

/* Block the signals the console handles; call first thing in main(). */
int console_block_signals(void);

/*
 * Run the console until quit, end of input, a signal, or no target left.
 * Returns dynprof's exit status: 0 quit, 1 no target left, 128+N signal N.
 */
int console_run(struct session *s, struct discover *disc);

#endif /* DYNPROF_CONSOLE_H */
