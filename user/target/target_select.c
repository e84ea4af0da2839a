// SPDX-License-Identifier: MIT
/* --pid=auto and --container=ID (see target_select.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "out/report.h"
#include "target/target_select.h"
#include "proc/tracker.h"

struct selection {
	const struct options *o;
	char *out;
	size_t len, used;
	int want_nspid; /* with --container: the pid inside; 0 for auto */
	int found;
};

static bool in_container(const struct options *o, const struct pm_proc *p)
{
	return pm_proc_in_container(p, o->container);
}

static void add(struct selection *s, int pid)
{
	s->used += (size_t)snprintf(s->out + s->used, s->len - s->used, "%s%d", s->found ? "," : "", pid);
	s->found++;
}

static void pick_auto(void *ctx, const struct pm_proc *p)
{
	struct selection *s = ctx;

	if (p->cards && p->socket_state == PM_SOCKET_LISTENING && in_container(s->o, p) &&
	    s->used + 16 < s->len)
		add(s, p->pid);
}

static void pick_nspid(void *ctx, const struct pm_proc *p)
{
	struct selection *s = ctx;

	if (p->container[0] && in_container(s->o, p) && p->nslevels &&
	    p->nspid[p->nslevels - 1] == s->want_nspid && s->used + 16 < s->len)
		add(s, p->pid);
}

static int select_auto(struct procmodel *m, struct selection *s)
{
	procmodel_foreach(m, pick_auto, s);
	if (s->found)
		return 0;
	report_error("Argument --pid=auto: no card-using process with a listening dynamic profiling socket%s%s, stop profiling.",
		     s->o->container ? " in container " : "", s->o->container ? s->o->container : "");
	return -ENOENT;
}

/* Each pid of the list is a pid inside the container. */
static int select_in_container(struct procmodel *m, struct selection *s)
{
	const char *p = s->o->pid_list;

	for (;;) {
		size_t len = strcspn(p, ",");
		const char *end = p + len;
		int before = s->found, v;

		if (options_pid_value(p, len, &v))
			return -EINVAL;
		s->want_nspid = v;
		procmodel_foreach(m, pick_nspid, s);
		if (s->found == before)
			report_warning("Argument --pid: invalid pid value: %d, will not collect profiling data for these process. (no such pid in container %s)",
				       v, s->o->container);
		if (!*end)
			break;
		p = end + 1;
	}
	if (s->found)
		return 0;
	report_error("Argument --pid: no valid pid values, stop profiling.");
	return -ENOENT;
}

int target_select(const struct options *o, char *out, size_t len)
{
	struct selection s = { .o = o, .out = out, .len = len };
	struct card_patterns patterns;
	const char *note;
	struct tracker *t;
	int rc;

	out[0] = '\0';
	options_card_patterns(o, &patterns);
	t = tracker_open(&patterns, TRACKER_SCAN_ONCE, NULL, NULL, false, &note);
	if (!t) {
		rc = -errno;
		report_error("dynprof: cannot scan processes: %s", strerror(-rc));
		return rc;
	}
	if (!strcmp(o->pid_list, "auto"))
		rc = select_auto(tracker_model(t), &s);
	else
		rc = select_in_container(tracker_model(t), &s);
	tracker_close(t);
	return rc;
}
