// SPDX-License-Identifier: MIT
/* The run every mode configures (see run.h). */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/run.h"
#include "kernel/discover.h"
#include "model/tracker.h"
#include "report/report.h"
#include "report/trace_out.h"
#include "results/output.h"

/*
 * --trace=on: <output>/<dynprof pid>_dynprof_trace.json, opened as every
 * file dynprof writes in --output (a dir fd, no symlink, O_EXCL when new;
 * an existing one only when it is ours, then emptied: a trace cannot be
 * appended to). 0, or -1 after printing why.
 */
static int trace_start(const struct options *o, const char *output, char *path, size_t len)
{
	char name[64], rule[256];
	int fd;

	if (!o->trace)
		return 0;
	snprintf(name, sizeof(name), "%d_dynprof_trace.json", (int)getpid());
	snprintf(path, len, "%s/%s", output, name);
	fd = output_open_file(output, name);
	if (fd >= 0 && ftruncate(fd, 0)) {
		int err = -errno;

		close(fd);
		fd = err;
	}
	if (fd < 0 || (fd = trace_open(fd, o->trace_fold_ns)) < 0) {
		report_error("Argument --trace: cannot write %s: %s.", path, strerror(-fd));
		return -1;
	}
	trace_rule(rule, sizeof(rule));
	report_info("--trace: writing %s; %s", path, rule);
	return 0;
}

static void trace_end(const char *path)
{
	struct trace_totals t;
	int rc = trace_close(&t);

	if (rc)
		report_warning("dynprof: --trace: %s is incomplete: %s", path, strerror(-rc));
	else
		report_info("--trace: %s: %" PRIu64 " windows, %" PRIu64 " system call slices, %" PRIu64
			    " calls folded (shorter than the threshold), %" PRIu64
			    " folded past the slice limit",
			    path, t.windows, t.slices, t.folded, t.over_cap);
}

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
	char output[PATH_MAX], trace[PATH_MAX + 64] = "";
	struct automation a;
	struct run r = { .o = o, .output = output, .a = &a };
	int rc;

	/* Everything that can be wrong with the automation is said before any target is reached. */
	if (automation_prepare(&a, o) || (m->check && m->check(&a, o)) ||
	    output_prepare(o->output, output, sizeof(output)) ||
	    trace_start(o, output, trace, sizeof(trace))) {
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
	if (o->trace)
		trace_end(trace); /* after the session: every window has ended */
	return rc;
}
