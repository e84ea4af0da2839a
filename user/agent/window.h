/* SPDX-License-Identifier: MIT */
/*
 * The collection window: the one piece of state a START opens and a STOP
 * closes, shared by both protocol generations and by every connection
 * (a window can outlive the client that opened it: CANN 8.5.0 leaves it
 * open for the next client; 9.x and v1 finalise it, see conv_v2.c).
 *
 * Only the server thread and shutdown (after joining it) open and close
 * windows; the host reads window_collecting() lock-free.
 */
#ifndef DYNPROF_AGENT_WINDOW_H
#define DYNPROF_AGENT_WINDOW_H

#include "dynprof/agent.h"
#include "agent/device.h"
#include "shared/compiler.h"

enum window_start_rc {
	WINDOW_STARTED,
	WINDOW_ALREADY,   /* a window is open */
	WINDOW_NO_DEVICE, /* the process has set no device */
	WINDOW_FAILED,    /* params unusable, folder not made, or on_start refused */
};

enum window_stop_rc {
	WINDOW_STOPPED,
	WINDOW_NOT_STARTED,
	WINDOW_STOP_FAILED, /* end_info could not be written */
};

void window_set_ops(const struct dynprof_agent_ops *ops);

/*
 * Open a window with the client's params; `devs` gets the devices used.
 * `v1_name`: its folder named as CANN's v1 names it (no pid).
 */
enum window_start_rc window_start(int v1_name, const char *params_json,
				  struct agent_devset *devs) DP_MUST_CHECK;

enum window_stop_rc window_stop(void);

int window_collecting(void);

/* In a fork()ed child: the parent's window is not ours to finish. */
void window_forget_after_fork(void);

#endif /* DYNPROF_AGENT_WINDOW_H */
