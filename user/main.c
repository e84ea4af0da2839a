// SPDX-License-Identifier: MIT
/* dynprof: option parsing and dispatch only. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/automation.h"
#include "common/fdlimit.h"
#include "kernel/cgroot.h"
#include "cluster/cluster.h"
#include "cli/console.h"
#include "cluster/node_copy.h"
#include "cli/dryrun.h"
#include "cli/follow_mode.h"
#include "kernel/discover.h"
#include "report/events_out.h"
#include "cli/launch_mode.h"
#include "cli/listing.h"
#include "cli/remote_client.h"
#include "config/options.h"
#include "results/output.h"
#include "report/report.h"
#include "session/session.h"
#include "model/tracker.h"

#ifndef DYNPROF_VERSION
#define DYNPROF_VERSION "0.1.0"
#endif

/*
 * An `open` condition needs to see card opens: the process tracker (*t
 * stays NULL when not needed). 0, or -1 after printing why.
 */
static int open_tracker(const struct options *o, const struct automation *a, struct tracker **t)
{
	struct card_patterns patterns;
	const char *note = NULL;

	*t = NULL;
	if (!automation_needs_model(a))
		return 0;
	options_card_patterns(o, &patterns);
	*t = tracker_open(&patterns, o->no_bpf ? TRACKER_NO_BPF : TRACKER_BPF, NULL, NULL, false, &note);
	if (!*t) {
		report_error("dynprof: cannot follow card opens: %s", strerror(errno));
		return -1;
	}
	if (note)
		report_info("%s", note);
	return 0;
}

static int attach_run(const struct options *o, struct automation *a, const char *output)
{
	struct console_sources src = { 0 };
	struct session *s;
	struct tracker *tracker = NULL;
	const char *note = NULL;
	int rc, sig;

	src.disc = discover_open(!o->no_bpf, &note);
	if (note)
		report_info("%s", note);
	rc = session_open(&s, o, output, src.disc);
	if (rc >= 0 && (open_tracker(o, a, &tracker) ||
			automation_start(a, s, tracker ? tracker_model(tracker) : NULL))) {
		session_shutdown(s); /* nothing was started: the targets are only let go */
		rc = -EINVAL;
	}
	if (rc >= 0) {
		src.tracker = tracker;
		automation_sources(a, &src);
		rc = console_run(s, &src);
		session_print_summary(s);
	} else
		rc = EXIT_OPTION_ERROR;
	/* A signal while the targets were being reached ends the run by its number too. */
	if (rc == EXIT_OPTION_ERROR && (sig = console_take_signal()))
		rc = 128 + sig;
	session_close(s);
	tracker_close(tracker);
	discover_close(src.disc);
	return rc;
}

static int attach(const struct options *o)
{
	char output[PATH_MAX];
	struct automation a;
	int rc;

	if (automation_prepare(&a, o) || automation_check_targets(&a, o) ||
	    output_prepare(o->output, output, sizeof(output))) {
		automation_close(&a);
		return EXIT_OPTION_ERROR;
	}
	rc = attach_run(o, &a, output);
	automation_close(&a);
	return rc;
}

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
		rc = node_copy_run(&o, attach);
	} else if (o.slurm_job || o.nodes) {
		rc = cluster_run(&o);
	} else if (o.application || o.app_argv) {
		rc = launch_mode_run(&o);
	} else {
		rc = attach(&o);
	}
	events_close();
	options_free(&o);
	return rc;
}
