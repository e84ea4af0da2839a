// SPDX-License-Identifier: MIT
/* Attach mode (see attach_mode.h): a configuration of the run (cli/run.h). */
#include <errno.h>
#include <string.h>

#include "cli/attach_mode.h"
#include "cli/run.h"
#include "kernel/discover.h"
#include "model/tracker.h"
#include "report/report.h"

/* The exit watcher first: the session reaches the targets it tells of. */
static int open_session(void *ctx, struct run *r)
{
	const char *note = NULL;

	(void)ctx;
	r->disc = discover_open(!r->o->no_bpf, &note);
	if (note)
		report_info("%s", note);
	return session_open(&r->s, r->o, r->output, r->disc) < 0 ? -1 : 0;
}

/* An `open` condition needs to see card opens: the process tracker (none when not needed). */
static int open_tracker(void *ctx, struct run *r)
{
	struct card_patterns patterns;
	const char *note = NULL;

	(void)ctx;
	if (!automation_needs_model(r->a))
		return 0;
	options_card_patterns(r->o, &patterns);
	r->tracker = tracker_open(&patterns, r->o->no_bpf ? TRACKER_NO_BPF : TRACKER_BPF, NULL,
				  NULL, false, &note);
	if (!r->tracker) {
		report_error("dynprof: cannot follow card opens: %s", strerror(errno));
		return -1;
	}
	if (note)
		report_info("%s", note);
	return 0;
}

/* A signal while the targets were being reached ends the run by its number too. */
static int failed(void *ctx)
{
	int sig = console_take_signal();

	(void)ctx;
	return sig ? 128 + sig : EXIT_OPTION_ERROR;
}

int attach_mode_run(const struct options *o)
{
	static const struct run_mode attach = {
		.console = { .name = "attach", .fixed_targets = true },
		.check = automation_check_targets,
		.open = open_session,
		.watch = open_tracker,
		.failed = failed,
	};

	return run_mode_run(o, &attach, NULL);
}
