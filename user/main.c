// SPDX-License-Identifier: MIT
/* dynprof: option parsing and dispatch only. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/attach_mode.h"
#include "common/fdlimit.h"
#include "kernel/cgroot.h"
#include "cluster/cluster.h"
#include "cli/console.h"
#include "cluster/node_copy.h"
#include "cli/dryrun.h"
#include "cli/follow_mode.h"
#include "report/events_out.h"
#include "cli/launch_mode.h"
#include "cli/listing.h"
#include "cli/remote_client.h"
#include "config/options.h"
#include "report/report.h"

#ifndef DYNPROF_VERSION
#define DYNPROF_VERSION "0.1.0"
#endif

int main(int argc, char **argv)
{
	struct options o;
	char err[4608]; /* a path and the sentence around it */
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	fdlimit_raise(); /* one connection per target: room for thousands */
	/* Before anything can start a window: no signal may end us unnoticed. */
	rc = console_block_signals();
	if (rc) {
		report_error("dynprof: cannot block signals: %s", strerror(-rc));
		return 1;
	}
	if (options_parse(argc, argv, &o)) {
		options_free(&o);
		return EXIT_OPTION_ERROR;
	}
	/* The sink opens before anything can happen that it must record. */
	if (o.events && events_open(o.events, err, sizeof(err))) {
		report_error("%s", err);
		options_free(&o);
		return EXIT_OPTION_ERROR;
	}
	/* Before any thread: a pod's own cgroup namespace would hide the host's tasks and paths. */
	if (!o.help && !o.version && !o.dry_run && cgroot_join_host_ns() > 0)
		/* stderr, as the card-open hook's note: --list --json keeps stdout JSON. */
		fprintf(stderr, "dynprof: joined the host's cgroup namespace (dynprof was in one of its own)\n");
	if (o.help) {
		options_print_help();
		rc = 0;
	} else if (o.version) {
		printf("dynprof %s\n", DYNPROF_VERSION);
		rc = 0;
	} else if (o.remote) {
		rc = remote_client_run(&o);
	} else if (o.dry_run) {
		rc = dryrun_run(&o);
	} else if (o.list) {
		rc = listing_run(&o);
	} else if (o.follow) {
		rc = follow_mode_run(&o);
	} else if (o.node_copy) {
		rc = node_copy_run(&o);
	} else if (o.slurm_job || o.nodes) {
		rc = cluster_run(&o);
	} else if (o.application || o.app_argv) {
		rc = launch_mode_run(&o);
	} else {
		rc = attach_mode_run(&o);
	}
	events_close();
	options_free(&o);
	return rc;
}
