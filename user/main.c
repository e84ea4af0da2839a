// SPDX-License-Identifier: MIT
/* dynprof: option parsing and dispatch only. */
#include <stdio.h>
#include <string.h>

#include "console.h"
#include "discover.h"
#include "events_out.h"
#include "launch_mode.h"
#include "listing.h"
#include "options.h"
#include "output.h"
#include "report.h"
#include "session.h"

#ifndef DYNPROF_VERSION
#define DYNPROF_VERSION "0.1.0"
#endif

static int attach(const struct options *o)
{
	char output[PATH_MAX];
	struct session s;
	struct discover *disc;
	const char *note = NULL;
	int rc;

	if (output_prepare(o->output, output, sizeof(output)))
		return EXIT_OPTION_ERROR;
	disc = discover_open(!o->no_bpf, &note);
	if (note)
		report_info("%s", note);
	rc = session_open(&s, o, output, disc);
	if (rc < 0) {
		session_close(&s);
		discover_close(disc);
		return EXIT_OPTION_ERROR;
	}
	rc = console_run(&s, &(struct console_sources){ .disc = disc });
	session_close(&s);
	discover_close(disc);
	return rc;
}

int main(int argc, char **argv)
{
	struct options o;
	int rc;

	/* Before anything can start a window: no signal may end us unnoticed. */
	console_block_signals();
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (options_parse(argc, argv, &o)) {
		options_free(&o);
		return EXIT_OPTION_ERROR;
	}
	/* The sink opens before anything can happen that it must record. */
	if (o.events && events_open(o.events)) {
		options_free(&o);
		return EXIT_OPTION_ERROR;
	}
	if (o.help) {
		options_print_help();
		rc = 0;
	} else if (o.version) {
		printf("dynprof %s\n", DYNPROF_VERSION);
		rc = 0;
	} else if (o.list) {
		rc = listing_run(&o);
	} else if (o.application || o.app_argv) {
		rc = launch_mode_run(&o);
	} else {
		rc = attach(&o);
	}
	events_close();
	options_free(&o);
	return rc;
}
