// SPDX-License-Identifier: MIT
/* dynprof: option parsing and dispatch only. */
#include <stdio.h>

#include "cli/attach_mode.h"
#include "cli/dryrun.h"
#include "cli/follow_mode.h"
#include "cli/launch_mode.h"
#include "cli/listing.h"
#include "cli/process.h"
#include "cli/remote_client.h"
#include "cluster/cluster.h"
#include "cluster/node_copy.h"
#include "config/options.h"

#ifndef DYNPROF_VERSION
#define DYNPROF_VERSION "0.1.0"
#endif

/* The one mode the options choose; dynprof's exit status. */
static int dispatch(struct options *o)
{
	if (o->help) {
		options_print_help();
		return 0;
	}
	if (o->version) {
		printf("dynprof %s\n", DYNPROF_VERSION);
		return 0;
	}
	if (o->remote)
		return remote_client_run(o);
	if (o->dry_run)
		return dryrun_run(o);
	if (o->list)
		return listing_run(o);
	if (o->follow)
		return follow_mode_run(o);
	if (o->node_copy)
		return node_copy_run(o);
	if (o->slurm_job || o->nodes)
		return cluster_run(o);
	if (o->application || o->app_argv)
		return launch_mode_run(o);
	return attach_mode_run(o);
}

int main(int argc, char **argv)
{
	struct options o;
	int rc;

	if (process_begin())
		return 1;
	if (options_parse(argc, argv, &o) || process_ready(&o)) {
		options_free(&o);
		return EXIT_OPTION_ERROR;
	}
	rc = dispatch(&o);
	process_end();
	options_free(&o);
	return rc;
}
