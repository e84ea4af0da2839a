// SPDX-License-Identifier: MIT
/* Launch mode (see launch_mode.h). */
#include <errno.h>
#include <stdint.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>
#include <stdio.h>
#include <sys/stat.h>
#include <limits.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "cli/console.h"
#include "cli/joiner.h"
#include "shared/clock.h"
#include "cli/launch.h"
#include "cli/launch_mode.h"
#include "cli/run.h"
#include "common/pidtab.h"
#include "report/report.h"
#include "session/session.h"
#include "model/tracker.h"
#include "proc/fdscan.h"
#include "shared/cards.h"

#define MAX_APP_ARGS 256
#define NO_CARD_NOTICE_MS 10000 /* say that nothing matched after this long */

struct follower {
	struct joiner j;      /* the session, the tracker, failed joins, socketless ones */
	char **argv;          /* the application's command line */
	struct launch app;    /* valid once root is set */
	pid_t root;           /* the application; 0 until it runs */
	bool app_gone;        /* the application exited, its tree lives on */
	bool follow_detached; /* --follow-detached: its tree's exit ends the run, not its own */
	struct pidtab tree;   /* pids of the application's tree, seen at fork */
	bool card_seen;       /* some process of the tree held a card */
	int64_t notice_at;    /* when to say nothing matched yet */
};

/*
 * Membership is decided when a process is first seen, while its parent is
 * still alive: a daemon whose parent exits (double fork, setsid) stays in
 * the tree although the ppid chain to the application is broken by then.
 */
static bool in_tree(struct follower *f, const struct pm_proc *p)
{
	if (f->root <= 0)
		return false;
	if (pidtab_get(&f->tree, p->pid))
		return true;
	if (p->pid != f->root && !pidtab_get(&f->tree, p->ppid) &&
	    !procmodel_descends_from(tracker_model(f->j.t), p->pid, f->root))
		return false;
	joiner_remember(&f->tree, p->pid, "its children may be missed");
	return true;
}

/* A process of the tree that holds a card and listens becomes a target. */
static void try_join(struct follower *f, const struct pm_proc *p)
{
	if (!in_tree(f, p) || !p->cards)
		return;
	f->card_seen = true;
	joiner_try(&f->j, p);
}

static void on_change(void *ctx, enum pm_change what, const struct pm_proc *p)
{
	struct follower *f = ctx;

	joiner_changed(&f->j, what, p);
	if (what == PM_CHANGE_EXIT)
		pidtab_del(&f->tree, p->pid);
	else
		try_join(f, p);
}

/*
 * Every round, not only on changes: a re-exec'd target's new socket can
 * listen on the same path in the same state as the old one, which no
 * change reports.
 */
static void join_candidates(void *ctx, const struct pm_proc *p)
{
	struct follower *f = ctx;

	if (p->cards && p->socket_state == PM_SOCKET_LISTENING)
		try_join(f, p);
}

static void each_socketless(void *ctx, const struct pm_proc *p)
{
	struct follower *f = ctx;

	if (p->cards && p->socket_state == PM_SOCKET_NONE && pidtab_get(&f->tree, p->pid))
		joiner_check_socketless(&f->j, p);
}

struct named_node {
	int pid;
	char path[PATH_MAX];
};

/* A character device named like a card (cards_named_like_one) among a process's fds. */
static int named_like_a_card(void *ctx, int fddir, const char *name, int fd, const char *target)
{
	struct named_node *n = ctx;
	struct stat st;

	(void)fd;
	if (target[0] != '/' || !cards_named_like_one(target) || fstatat(fddir, name, &st, 0) ||
	    !S_ISCHR(st.st_mode))
		return 0;
	snprintf(n->path, sizeof(n->path), "%s", target);
	return 1;
}

/*
 * Nothing matched a card pattern: a process of the tree may hold a node
 * named like a card elsewhere (the demo's is in /tmp). Say which, and the
 * exact --device that would take it. True when said.
 */
static bool hint_device(struct follower *f)
{
	struct named_node n = { 0 };
	char piddir[32], *slash;

	for (size_t i = 0; i < pidtab_cap(&f->tree) && !n.path[0]; i++) {
		const struct pidtab_slot *slot = pidtab_slot(&f->tree, i);
		int dir;

		if (slot->pid <= 0)
			continue;
		snprintf(piddir, sizeof(piddir), "/proc/%d", slot->pid);
		dir = open(piddir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dir < 0)
			continue;
		n.pid = slot->pid;
		if (fdscan(dir, named_like_a_card, &n) < 0)
			n.path[0] = '\0';
		close(dir);
	}
	if (!n.path[0] || !(slash = strrchr(n.path, '/')))
		return false;
	report_info("no process of the application has opened a card yet: pid %d holds %s, which no card pattern takes; to take it, add --device='%.*s/*' (dynprof keeps following the application)",
		    n.pid, n.path, (int)(slash - n.path), n.path);
	return true;
}

/*
 * After every console round: join any listening card holder of the tree
 * not joined yet; and when nothing in the tree has opened a card after a
 * while, say so once.
 */
static void each_round(void *ctx)
{
	struct follower *f = ctx;

	joiner_round(&f->j);
	procmodel_foreach(tracker_model(f->j.t), join_candidates, f);
	procmodel_foreach(tracker_model(f->j.t), each_socketless, f);
	if (f->card_seen || !f->notice_at || clock_ms() < f->notice_at)
		return;
	f->notice_at = 0;
	if (!hint_device(f))
		report_info("no process of the application has opened a card yet (dynprof keeps following it; see --device)");
}

/* --application="APP ARGS": split on blanks, as msprof does. */
static char **split_application(const char *text, char **argv, char *buf, size_t len)
{
	int n = 0;

	snprintf(buf, len, "%s", text);
	for (char *save = NULL, *tok = strtok_r(buf, " \t", &save); tok && n < MAX_APP_ARGS - 1;
	     tok = strtok_r(NULL, " \t", &save))
		argv[n++] = tok;
	argv[n] = NULL;
	return n ? argv : NULL;
}

/*
 * After the console: wait for the application. Signals that reach dynprof
 * now (every window is already closed) are passed on to it, so Ctrl-C
 * still ends a run whose application does not exit by itself.
 */
static void wait_forwarding_signals(struct launch *app)
{
	int sigfd = console_signalfd();
	while (sigfd >= 0 && !launch_poll(app)) {
		struct pollfd pfds[2] = { { .fd = app->pidfd, .events = POLLIN },
					  { .fd = sigfd, .events = POLLIN } };
		struct signalfd_siginfo si;

		if (poll(pfds, 2, app->pidfd < 0 ? 100 : -1) < 0 && errno != EINTR)
			break;
		if (pfds[1].revents && read(sigfd, &si, sizeof(si)) == sizeof(si))
			launch_signal(app, (int)si.ssi_signo);
	}
	if (sigfd >= 0)
		close(sigfd);
	launch_wait(app);
}

/* Processes of the tree still in the model (the application's detached workers once it exited). */
static int tree_alive(const struct follower *f)
{
	int n = 0;

	for (size_t i = 0; i < pidtab_cap(&f->tree); i++) {
		int pid = pidtab_slot(&f->tree, i)->pid;

		if (pid > 0 && pid != f->root && procmodel_get(tracker_model(f->j.t), pid))
			n++;
	}
	return n;
}

/* --device globs as DYNPROF_AGENT_DEVICES's ':'-separated list; NULL when none given. */
static const char *devices_env(const struct options *o, char *buf, size_t len)
{
	size_t used = 0;

	if (!o->ndevices)
		return NULL;
	buf[0] = '\0';
	for (int i = 0; i < o->ndevices && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ":" : "", o->devices[i]);
	return used < len ? buf : NULL;
}

/* The session the tree's card holders join as they come. */
static int open_session(void *ctx, struct run *r)
{
	struct follower *f = ctx;

	session_open_launch(&r->s, r->o, r->output);
	joiner_init(&f->j, r->s, r->o, r->o->msprof_key);
	pidtab_init(&f->tree);
	return 0;
}

/* Tracking before the application starts: no process of it escapes. */
static int open_tracker(void *ctx, struct run *r)
{
	struct follower *f = ctx;

	r->tracker = f->j.t = joiner_tracker_open(r->o, r->s, on_change, f);
	return r->tracker ? 0 : -1;
}

static int start_app(void *ctx, struct run *r)
{
	char devices[4096];
	struct follower *f = ctx;
	int rc = launch_start(&f->app, f->argv, r->o->msprof_key, r->o->app_stdin,
			      devices_env(r->o, devices, sizeof(devices)));

	if (rc) {
		report_error("dynprof: cannot start %s: %s", f->argv[0], strerror(-rc));
		return -1;
	}
	f->root = f->app.pid;
	f->notice_at = clock_ms() + NO_CARD_NOTICE_MS;
	report_info("application %s started: pid %d", f->argv[0], f->app.pid);
	return 0;
}

/* The console wakes when the application exits; once it did, its pidfd would wake it every round. */
static int app_fd(void *ctx)
{
	struct follower *f = ctx;

	return f->app_gone ? -1 : f->app.pidfd;
}

/* The application ended first: the run ends with it, or with the last detached process of its tree. */
static bool app_ended(void *ctx, int *status)
{
	struct follower *f = ctx;
	int alive;

	if (f->app_gone) {
		if (tree_alive(f) > 0)
			return false;
		report_info("the last process of the application's tree exited");
		*status = launch_exit_status(&f->app);
		return true;
	}
	if (!launch_poll(&f->app))
		return false;
	alive = f->follow_detached ? tree_alive(f) : 0;
	report_info("application exited with status %d", launch_exit_status(&f->app));
	if (alive > 0) {
		/* A launcher that detached its workers: they are the run. */
		report_info("%d process%s of its tree still run%s (detached workers): following %s until %s exit (--follow-detached=off: end with the application)",
			    alive, alive == 1 ? "" : "es", alive == 1 ? "s" : "",
			    alive == 1 ? "it" : "them", alive == 1 ? "it" : "they");
		f->app_gone = true;
		return false;
	}
	*status = launch_exit_status(&f->app);
	return true;
}

/* Windows are closed first; then the application gets the same signal. */
static void pass_signal(void *ctx, int sig)
{
	struct follower *f = ctx;

	launch_signal(&f->app, sig);
}

/* Launch mode ends with the application's status; the console's only ended the console. */
static int wait_app(void *ctx, struct run *r, int status)
{
	struct follower *f = ctx;

	(void)r;
	(void)status;
	if (!launch_poll(&f->app)) /* not after "application exited" */
		report_info("waiting for app process exit......");
	wait_forwarding_signals(&f->app);
	return launch_exit_status(&f->app);
}

static void close_follower(void *ctx, struct run *r)
{
	struct follower *f = ctx;

	(void)r;
	if (f->root)
		launch_close(&f->app);
	pidtab_free(&f->tree);
	joiner_free(&f->j);
}

int launch_mode_run(const struct options *o)
{
	char *args[MAX_APP_ARGS], buf[8192];
	struct follower f = { .argv = o->app_argv, .follow_detached = o->follow_detached };
	const struct run_mode launch = {
		.console = { .name = "launch",
			     .no_input = o->app_stdin,
			     .wake_fd = app_fd,
			     .ended = app_ended,
			     .on_tick = each_round,
			     .signalled = pass_signal },
		.open = open_session,
		.watch = open_tracker,
		.begin = start_app,
		.finish = wait_app,
		.close = close_follower,
	};

	if (o->application && !(f.argv = split_application(o->application, args, buf, sizeof(buf)))) {
		report_error("Argument --application: empty application.");
		return EXIT_OPTION_ERROR;
	}
	return run_mode_run(o, &launch, &f);
}
