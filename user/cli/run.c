// SPDX-License-Identifier: MIT
/* The run every mode configures (see run.h). */
#include <limits.h>

#include "cli/run.h"
#include "kernel/discover.h"
#include "model/tracker.h"
#include "results/output.h"

/* The session, the watchers, the engine and the mode's start: 0, or -1 after printing why. */
static int start(const struct run_mode *m, void *ctx, struct run *r)
{
	if (m->watch && m->watch(ctx, r))
		return -1;
	if (automation_start(r->a, r->s, r->tracker ? tracker_model(r->tracker) : NULL))
		return -1;
	return m->begin ? m->begin(ctx, r) : 0;
}

static int console(const struct run_mode *m, void *ctx, struct run *r)
{
	struct console_sources src = {
		.mode = &m->console, .ctx = ctx, .disc = r->disc, .tracker = r->tracker
	};

	automation_sources(r->a, &src);
	return console_run(r->s, &src);
}

static int session_run(const struct run_mode *m, void *ctx, struct run *r)
{
	int rc;

	if (m->open(ctx, r))
		return m->failed ? m->failed(ctx) : EXIT_OPTION_ERROR;
	if (start(m, ctx, r)) {
		session_shutdown(r->s); /* nothing was started: the targets (if any yet) are only let go */
		return m->failed ? m->failed(ctx) : EXIT_OPTION_ERROR;
	}
	rc = console(m, ctx, r);
	if (m->finish)
		rc = m->finish(ctx, r, rc);
	session_print_summary(r->s);
	return rc;
}

int run_mode_run(const struct options *o, const struct run_mode *m, void *ctx)
{
	char output[PATH_MAX];
	struct automation a;
	struct run r = { .o = o, .output = output, .a = &a };
	int rc;

	/* Everything that can be wrong with the automation is said before any target is reached. */
	if (automation_prepare(&a, o) || (m->check && m->check(&a, o)) ||
	    output_prepare(o->output, output, sizeof(output))) {
		automation_close(&a);
		return EXIT_OPTION_ERROR;
	}
	rc = session_run(m, ctx, &r);
	if (m->close)
		m->close(ctx, &r);
	tracker_close(r.tracker);
	session_close(r.s);
	discover_close(r.disc);
	automation_close(&a);
	return rc;
}
