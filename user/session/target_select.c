// SPDX-License-Identifier: MIT
/* --pid=auto and --container=ID (see target_select.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/report.h"
#include "model/container.h"
#include "model/match.h"
#include "config/hostsys.h"
#include "session/target_select.h"
#include "model/tracker.h"

struct selection {
	const struct options *o;
	char *out; /* malloc'd, grows */
	size_t len, used;
	bool nomem;
	int want_nspid; /* with --container: the pid inside; 0 for auto */
	int found;
};

static void add(struct selection *s, int pid)
{
	if (s->used + 16 > s->len) {
		size_t more = s->len ? 2 * s->len : 4096;
		char *grown = realloc(s->out, more);

		if (!grown) {
			s->nomem = true;
			return;
		}
		s->out = grown;
		s->len = more;
	}
	s->used += (size_t)snprintf(s->out + s->used, s->len - s->used, "%s%d", s->found ? "," : "", pid);
	s->found++;
}

/*
 * A card holder that listens; with --host-sys asking dynprof for data
 * (config/hostsys.h), also one that serves no socket at all: its stand-in
 * gives it host-only windows (hostdata/standin.h). A busy socket is
 * another client's either way.
 */
static void pick_auto(void *ctx, const struct pm_proc *p)
{
	struct selection *s = ctx;
	bool standin = p->socket_state == PM_SOCKET_NONE &&
		       hostsys_own(options_switch(s->o, "host-sys"));

	if (p->cards && (p->socket_state == PM_SOCKET_LISTENING || standin) && match_filters(s->o, p))
		add(s, p->pid);
}

static void pick_nspid(void *ctx, const struct pm_proc *p)
{
	struct selection *s = ctx;

	if (p->container[0] && pm_proc_in_container(p, s->o->containers[0]) && p->nslevels &&
	    p->nspid[p->nslevels - 1] == s->want_nspid)
		add(s, p->pid);
}

struct unseen {
	uid_t me;
	int n;
};

static void count_unseen(void *ctx, const struct pm_proc *p)
{
	struct unseen *u = ctx;

	/* Kernel threads (no command line) hold no cards. */
	if (p->uid != u->me && p->cmdline[0])
		u->n++;
}

int target_select_unseen(const struct procmodel *m)
{
	struct unseen u = { geteuid(), 0 };

	if (u.me == 0)
		return 0;
	procmodel_foreach(m, count_unseen, &u);
	return u.n;
}

bool target_select_nosocket_why(const struct procmodel *m, const struct pm_proc *p, char *buf, size_t len)
{
	const struct pm_proc *parent = procmodel_get(m, p->ppid);
	bool fork = parent && (parent->cards & p->cards) && !strcmp(parent->exe, p->exe) &&
		    !strcmp(parent->cmdline, p->cmdline);

	if (fork)
		snprintf(buf, len,
			 "a fork of pid %d without exec (a worker pool's child, e.g. Python multiprocessing's default 'fork'): CANN serves a socket only in the process that initialised it, and dynprof's agent does not serve in a forked child; start the workers with 'spawn' or 'forkserver', or initialise CANN in each",
			 parent->pid);
	else
		snprintf(buf, len, "started without PROFILING_MODE=dynamic, or not initialised yet");
	return fork;
}

struct nosock {
	const struct selection *s;
	const struct procmodel *m;
};

static void tell_nosocket(void *ctx, const struct pm_proc *p)
{
	const struct nosock *n = ctx;
	char why[512];

	if (!p->cards || p->socket_state != PM_SOCKET_NONE || !match_filters(n->s->o, p))
		return;
	target_select_nosocket_why(n->m, p, why, sizeof(why));
	report_info("pid %d holds a card but serves no socket: %s", p->pid, why);
}

static int select_auto(struct procmodel *m, struct selection *s)
{
	struct nosock n = { s, m };
	char hidden[192] = "";
	int unseen;

	procmodel_foreach(m, pick_auto, s);
	if (s->found)
		return 0;
	procmodel_foreach(m, tell_nosocket, &n);
	unseen = target_select_unseen(m);
	if (unseen)
		snprintf(hidden, sizeof(hidden),
			 " among the processes dynprof can see (not root: the cards of %d processes of other users cannot be seen; run it as root)",
			 unseen);
	report_error("Argument --pid=auto: no card-using process with a listening dynamic profiling socket%s%s, stop profiling.",
		     s->o->ncontainers || s->o->nusers || s->o->nexes ?
			     " matching --container, --user and --exe" :
			     "",
		     hidden);
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
				       v, s->o->containers[0]);
		if (!*end)
			break;
		p = end + 1;
	}
	if (s->found)
		return 0;
	report_error("Argument --pid: no valid pid values, stop profiling.");
	return -ENOENT;
}

int target_select(const struct options *o, char **out)
{
	struct selection s = { .o = o };
	struct card_patterns patterns;
	const char *note;
	struct tracker *t;
	int rc;

	*out = NULL;
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
	if (rc == 0 && s.nomem) {
		report_error("dynprof: out of memory listing %d targets", s.found);
		rc = -ENOMEM;
	}
	if (rc)
		free(s.out);
	else
		*out = s.out;
	return rc;
}
