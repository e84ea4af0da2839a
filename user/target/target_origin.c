// SPDX-License-Identifier: MIT
/* A target's container and command, and its folder in --output (see target_origin.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "out/output.h"
#include "proc/procmodel.h"
#include "proc/procscan.h"
#include "target/target_origin.h"

#define CONTAINER_SHORT 12 /* as docker ps shows ids */

void target_origin_read(struct target *t)
{
	struct pm_proc p;

	t->container[0] = t->command[0] = '\0';
	if (procscan_origin(t->pid, &p))
		return;
	snprintf(t->command, sizeof(t->command), "%.*s", (int)sizeof(t->command) - 1, p.cmdline);
	if (p.container_name[0])
		snprintf(t->container, sizeof(t->container), "%.*s", (int)sizeof(t->container) - 1, p.container_name);
	else if (p.container[0])
		snprintf(t->container, sizeof(t->container), "%.*s", CONTAINER_SHORT, p.container);
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
