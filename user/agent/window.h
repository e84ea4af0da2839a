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

#include <stdint.h>

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

/* The host's callbacks (NULL: none) and the chip info.json names (DYNPROF_AGENT_CHIP). */
void window_set_ops(const struct dynprof_agent_ops *ops, int chip);

/*
 * Open a window with the client's params; `devs` gets the devices used.
 * `v1_name`: its folder named as CANN's v1 names it (no pid).
 */
enum window_start_rc window_start(int v1_name, const char *params_json,
				  struct agent_devset *devs) DP_MUST_CHECK;

enum window_stop_rc window_stop(void);

int window_collecting(void);

/*
 * A window whose client vanished (the 8.5.0 flavour keeps it open, as
 * CANN 8.5.0): window_orphan starts the grace period of `grace_sec` (0:
 * never stopped); a client that connects is told in the log and can stop
 * it (the wait ends; it starts again if that client vanishes too);
 * window_orphan_due_ms is how long is left (-1: nothing due), then
 * window_stop_orphan stops it with host/dynprof_orphaned.txt saying when
 * and why. Server thread only.
 */
void window_orphan(int grace_sec);
void window_client_connected(void);
int64_t window_orphan_due_ms(int grace_sec);
void window_stop_orphan(int grace_sec);

/* In a fork()ed child: the parent's window is not ours to finish. */
void window_forget_after_fork(void);

#endif /* DYNPROF_AGENT_WINDOW_H */
