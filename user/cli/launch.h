/* SPDX-License-Identifier: MIT */
/*
 * Launch mode's application: started with PROFILING_MODE=dynamic in its own
 * process group, standard input from /dev/null (the console keeps the
 * terminal), output passed through; waited for at the end.
 */
#ifndef DYNPROF_LAUNCH_H
#define DYNPROF_LAUNCH_H

#include <stdbool.h>
#include <sys/types.h>

#include "shared/compiler.h"

struct launch {
	pid_t pid;  /* the application's pid (and process group) */
	int pidfd;  /* readable once it exited */
	int status; /* wait status, valid once reaped */
	bool reaped;
};

/*
 * Start argv[0] (searched in PATH). With msprof_key, the application also
 * gets DYNAMIC_PROFILING_KEY_PID=<dynprof's pid>, as msprof sets it (so
 * every CANN process in the tree competes for one socket path); without it
 * the variable is removed, so each process serves its own socket.
 * `devices` (':'-separated card globs, --device; NULL: none given) becomes
 * the agent's DYNPROF_AGENT_DEVICES unless the environment already sets it.
 * Returns 0 or a negative errno (the child could not be started).
 */
int launch_start(struct launch *l, char *const argv[], bool msprof_key, bool keep_stdin,
		 const char *devices) DP_MUST_CHECK;

/* Non-blocking: 1 when the application has exited (reaped), else 0. */
int launch_poll(struct launch *l);

/* Block until the application exits. */
void launch_wait(struct launch *l);

/* Send a signal to the application's process group. */
void launch_signal(const struct launch *l, int sig);

/* dynprof's exit status for the application's: its code, or 128+N for signal N. */
int launch_exit_status(const struct launch *l);

void launch_close(struct launch *l);

#endif /* DYNPROF_LAUNCH_H */
