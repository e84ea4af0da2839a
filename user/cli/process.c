// SPDX-License-Identifier: MIT
/* Around every mode (see process.h). */
#include <stdio.h>
#include <string.h>

#include "cli/console.h"
#include "cli/process.h"
#include "common/fdlimit.h"
#include "kernel/cgroot.h"
#include "report/events_out.h"
#include "report/report.h"

int process_begin(void)
{
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	fdlimit_raise(); /* one connection per target: room for thousands */
	/* Before anything can start a window: no signal may end us unnoticed. */
	rc = console_block_signals();
	if (rc) {
		report_error("dynprof: cannot block signals: %s", strerror(-rc));
		return -1;
	}
	return 0;
}

int process_ready(const struct options *o)
{
	char err[4608]; /* a path and the sentence around it */

	/* The sink opens before anything can happen that it must record. */
	if (o->events && events_open(o->events, err, sizeof(err))) {
		report_error("%s", err);
		return -1;
	}
	/* Before any thread: a pod's own cgroup namespace would hide the host's tasks and paths. */
	if (!o->help && !o->version && !o->dry_run && cgroot_join_host_ns() > 0)
		/* stderr, as the card-open hook's note: --list --json keeps stdout JSON. */
		fprintf(stderr,
			"dynprof: joined the host's cgroup namespace (dynprof was in one of its own)\n");
	return 0;
}

void process_end(void)
{
	events_close();
}
