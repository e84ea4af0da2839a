/* SPDX-License-Identifier: MIT */
/*
 * Which devices the process has "set", the condition CANN checks before a
 * START may succeed. Explicit ids (dynprof_agent_set_device) win; without
 * any, the process counts as having the card whose node it holds open,
 * looked up at START time (card patterns from DYNPROF_AGENT_DEVICES, else
 * the defaults of dynprof/cards.h).
 */
#ifndef DYNPROF_AGENT_DEVICE_H
#define DYNPROF_AGENT_DEVICE_H

#include <stddef.h>

#include "shared/compiler.h"

#define AGENT_DEVICE_ID_MAX 1023 /* highest id set_device accepts */
#define AGENT_DEVSET_MAX 64      /* ids a window records */

struct agent_devset {
	int count;
	int id[AGENT_DEVSET_MAX]; /* ascending */
};

/* Load the card patterns. 0, -EINVAL (bad DYNPROF_AGENT_DEVICES), -ENOMEM. */
int agent_devices_init(void) DP_MUST_CHECK;
void agent_devices_fini(void);

/* Record an explicit device. Lock-free: the host may call it anywhere. */
int agent_devices_mark(int id) DP_MUST_CHECK;

/* The devices in force now; count 0 when none. */
void agent_devices_current(struct agent_devset *out);

/* "0,1" style list: each id followed by `sep` except the last, unless `trailing`. */
void agent_devset_format(const struct agent_devset *d, const char *sep, int trailing, char *buf,
			 size_t len);

#endif /* DYNPROF_AGENT_DEVICE_H */
