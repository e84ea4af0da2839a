// SPDX-License-Identifier: MIT
/* A target's container and command, and its folder in --output (see target_origin.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "results/output.h"
#include "proc/carddevs.h"
#include "model/pm_proc.h"
#include "model/procscan.h"
#include "session/target_origin.h"

#define CONTAINER_SHORT 12 /* as docker ps shows ids */

void target_origin_take(struct target *t, const struct pm_proc *p)
{
	snprintf(t->command, sizeof(t->command), "%.*s", (int)sizeof(t->command) - 1, p->cmdline);
	snprintf(t->container_id, sizeof(t->container_id), "%s", p->container);
	snprintf(t->container_name, sizeof(t->container_name), "%s", p->container_name);
	t->uid = (unsigned)p->uid;
	t->uid_known = true;
	t->container[0] = '\0';
	if (p->container_name[0])
		snprintf(t->container, sizeof(t->container), "%.*s", (int)sizeof(t->container) - 1,
			 p->container_name);
	else if (p->container[0])
		snprintf(t->container, sizeof(t->container), "%.*s", CONTAINER_SHORT, p->container);
}

void target_origin_read(struct target *t)
{
	struct pm_proc p;

	t->container[0] = t->command[0] = t->container_id[0] = t->container_name[0] = '\0';
	t->uid_known = false;
	if (procscan_origin(t->pid, &p) == 0)
		target_origin_take(t, &p);
}

void target_origin_cards(struct target *const *ts, int n, const struct options *o)
{
	struct card_patterns patterns;
	struct card_devs *devs = calloc(1, sizeof(*devs)); /* DP_MAX_CARD_DEVS entries: not for the stack */
	struct procscan_cards c = { &patterns, devs };

	if (!devs)
		return;
	options_card_patterns(o, &patterns);
	if (carddevs_glob(devs, &patterns) == 0)
		for (int i = 0; i < n; i++)
			if (!ts[i]->dropped && procscan_cards(ts[i]->pid, 0, &c, -1, &ts[i]->cards))
				ts[i]->cards = 0; /* not readable: unknown, shown as none */
	free(devs);
}

int target_output_subdir(const struct target *t, const char *output, char *sub, size_t len)
{
	int rc;

	sub[0] = '\0';
	if (!t->container[0])
		return 0;
	/* Names are [A-Za-z0-9_.+-] (and '/' between a namespace and its pod): a single safe part. */
	snprintf(sub, len, "%s", t->container);
	for (char *c = sub; *c; c++)
		if (*c == '/')
			*c = '_';
	rc = sub[0] == '.' ? -EINVAL : output_subdir(output, sub);
	if (rc)
		sub[0] = '\0';
	return rc;
}
