// SPDX-License-Identifier: MIT
/*
 * Opening a session: --pid parsed and checked as msprof checks it, each
 * target's socket found, trusted and connected, the first exchange done
 * with all targets in parallel under msprof's 1 s connect timeout.
 */
#include <ctype.h>
#include <pthread.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fsident.h"
#include "common/grow.h"
#include "common/pidtab.h"
#include "common/rootfile.h"
#include "shared/array_size.h"
#include "shared/clock.h"
#include "report/events_out.h"
#include "results/output.h"
#include "results/winaccount.h"
#include "config/hostsys.h"
#include "config/params.h"
#include "hostdata/hostdata.h"
#include "hostdata/standin.h"
#include "session/protodetect.h"
#include "ns/targetfs.h"
#include "proc/procfs.h"
#include "report/report.h"
#include "session/session_impl.h"
#include "session/target_origin.h"
#include "session/target_leave.h"
#include "session/target_results.h"
#include "session/target_select.h"
#include "session/watchdog.h"

#define CONNECT_TIMEOUT_MS 1000 /* msprof's send/receive timeout while connecting */

/*
 * A slot for a new target, zeroed but for the fields every target needs:
 * launch mode takes the slot of one that left (and that no layer above
 * holds), else the table grows. NULL when out of memory.
 */
struct target *session_new_slot(struct session *s, bool reuse)
{
	struct target *t = NULL;

	/*
	 * From the slot reused last on: with 1000 targets served, the one
	 * free slot (the last job's) was found after a walk of every target,
	 * at every join.
	 */
	for (int k = 0; reuse && k < s->ntargets && !t; k++) {
		int i = (s->reuse_from + k) % s->ntargets;
		struct target *old = s->targets[i];

		/* A slot whose window is still being brought out stays until that ends. */
		if (old->dropped && !old->collect_head && !old->in_flight &&
		    (old->released || !s->slot_holders)) {
			t = old;
			s->reuse_from = s->last_slot = i;
		}
	}
	if (t)
		target_free_beside(t, &s->jobs); /* what the target that left still held */
	else {
		void *table = s->targets;

		if (grow_for_one(&table, &s->slots, (size_t)s->ntargets, sizeof(*s->targets),
				 SESSION_FIRST_SLOTS))
			return NULL;
		s->targets = table;
		t = malloc(sizeof(*t));
		if (!t)
			return NULL;
		s->last_slot = s->ntargets;
		s->targets[s->ntargets++] = t;
	}
	*t = (struct target){ .fd = -1, .ep_fd = -1, .result_fd = -1, .serial = ++s->serial };
	return t;
}

void session_index_target(struct session *s, struct target *t)
{
	if (pidtab_put(&s->bypid, t->pid, t))
		s->index_incomplete = true;
}

/* A pid given twice is one target: looked up in the session's pid index, not a walk of the list. */
static int add_listed(struct session *s, int pid)
{
	struct target *t;

	if (pidtab_get(&s->bypid, pid))
		return 0;
	t = session_new_slot(s, false);
	if (t) {
		t->pid = pid;
		session_index_target(s, t);
		session_shape_changed(s); /* a listed target is live at once */
	}
	if (!t || s->index_incomplete) {
		report_error("dynprof: out of memory for %d targets", s->ntargets + (t ? 0 : 1));
		return -ENOMEM;
	}
	return 0;
}

/* Split --pid into targets. A non-numeric value ends the run (msprof). */
static int parse_pid_list(struct session *s, const char *list)
{
	int rc = 0;

	for (const char *p = list; !rc;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		int v;

		if (options_pid_value(p, len, &v)) {
			rc = -EINVAL;
			break;
		}
		rc = add_listed(s, v);
		if (!comma)
			break;
		p = comma + 1;
	}
	return rc;
}

/* --pid=auto and --container name processes through the process model. */
static int resolve_pid_list(struct session *s, const struct options *o)
{
	char *pids;
	int rc;

	if (strcmp(o->pid_list, "auto") && !o->ncontainers)
		return parse_pid_list(s, o->pid_list);
	rc = target_select(o, &pids);
	if (rc)
		return rc;
	report_info("targets: %s", pids);
	rc = parse_pid_list(s, pids);
	free(pids);
	return rc;
}

/*
 * Out of file descriptors: dynprof holds about FD_BASE of its own and one
 * per target (its connection; one more for a folder inside a container).
 * Said once, with what is needed; each target still gets its own line.
 */
#define FD_BASE 14

void session_fd_shortage(struct session *s, int rc)
{
	struct rlimit rl;

	if ((rc != -EMFILE && rc != -ENFILE) || s->fd_limit_said)
		return;
	s->fd_limit_said = true;
	if (rc == -ENFILE) {
		report_error("dynprof: the system is out of file descriptors (fs.file-max): %d targets need about %d",
			     s->ntargets, FD_BASE + s->ntargets);
		return;
	}
	getrlimit(RLIMIT_NOFILE, &rl);
	report_error("dynprof: out of file descriptors: %d targets need about %d (%d + 1 per target), the limit is %llu (hard %llu): raise it (ulimit -n) and run again",
		     s->ntargets, FD_BASE + s->ntargets, FD_BASE, (unsigned long long)rl.rlim_cur,
		     (unsigned long long)rl.rlim_max);
}

static void skip_pid(struct target *t, const char *why)
{
	report_warning("Argument --pid: invalid pid value: %d, will not collect profiling data for these process. (%s)",
		       t->pid, why);
	target_drop(t);
}

/*
 * A process that serves no socket still gets windows when --host-sys asks
 * dynprof to collect something itself: host-only ones, from a stand-in
 * server (hostdata/standin.h). 0 when it will have one.
 */
int session_stand_in(const struct session *s, struct target *t)
{
	char words[64];

	if (!hostsys_own(options_switch(s->opts, "host-sys")) ||
	    procfs_read_status(t->pid, &t->sock.uid, &t->sock.nspid))
		return -ENOENT;
	t->standin = true;
	t->nspid = t->sock.nspid;
	hostsys_own_words(hostsys_own(options_switch(s->opts, "host-sys")), words, sizeof(words));
	report_info("pid %d serves no dynamic profiling socket (not started with PROFILING_MODE=dynamic): its windows hold the host data dynprof collects itself (%s), no device data",
		    t->pid, words);
	return 0;
}

/* Find the socket; explain a pid without process or socket. */
static int locate(struct session *s, struct target *t)
{
	char why[2 * PATH_MAX + 256];
	int rc = socklocate_find(t->pid, &t->sock);

	session_fd_shortage(s, rc);
	if (rc == 0) {
		t->nspid = t->sock.nspid;
		return 0;
	}
	if (rc == -ENOENT && session_stand_in(s, t) == 0)
		return 0;
	if (rc == -ESRCH)
		snprintf(why, sizeof(why), "no such process");
	else if (rc == -ENOENT)
		snprintf(why, sizeof(why),
			 "it serves no dynamic profiling socket: no %s in its home %s, no abstract @" DYNPROF_SOCKET_PREFIX_ALT
			 "<key> in its network namespace; was it started with PROFILING_MODE=dynamic?",
			 t->sock.name, t->sock.home[0] ? t->sock.home : "(unknown)");
	else
		snprintf(why, sizeof(why), "%s", t->sock.why);
	session_fd_shortage(s, rc);
	skip_pid(t, why);
	return rc;
}

static void choose_protocol(struct target *t, enum proto_version asked)
{
	if (asked != PROTO_AUTO) {
		t->proto = asked;
		snprintf(t->proto_why, sizeof(t->proto_why), "--protocol=%s", proto_version_name(asked));
		return;
	}
	if (t->sock.flavour == SOCK_FLAVOUR_ABSTRACT) {
		/* Only CANN 8.5.0 and 9.0.0-beta.1 listen on an abstract name: v2. */
		t->proto = PROTO_V2;
		snprintf(t->proto_why, sizeof(t->proto_why), "abstract socket @%.64s", t->sock.name);
		return;
	}
	if (t->sock.flavour == SOCK_FLAVOUR_FILE_ALT) {
		/* dyn_prof_sock_ files: only v2 master builds of February-March 2026. */
		t->proto = PROTO_V2;
		snprintf(t->proto_why, sizeof(t->proto_why), "socket file %.64s", t->sock.name);
		return;
	}
	t->proto = protodetect(t->pid, t->proto_why, sizeof(t->proto_why));
	/* v2 is the default; say why when auto picked the older generation. */
	if (t->proto == PROTO_V1)
		report_info("pid %d: protocol v1 (%s)", t->pid, t->proto_why);
}

/* Is `dir` the same folder inside the target's root as it is here? */
static bool visible_in_target(const char *dir, int pid)
{
	char inside[PATH_MAX + 32];

	snprintf(inside, sizeof(inside), "/proc/%d/root%s", pid, dir);
	return procfs_same_file(dir, inside);
}

/*
 * mkdir `name` under dirfd for the target's user, and open it. Everything
 * is checked on the opened fd, never by name (a bind mount defeats
 * AT_SYMLINK_NOFOLLOW): it must be a folder on dirfd's own mount (not
 * something mounted there), either just made by us (then fchown'd to the
 * target's uid through the fd) or already the target's uid's. -EXDEV: a
 * mount; -EPERM: someone else's folder.
 */
static int make_owned_dir(int dirfd, const char *name, uid_t uid)
{
	bool made = mkdirat(dirfd, name, 0750) == 0;
	struct stat st;
	uint64_t here, there;
	int fd, err = 0;

	if (!made && errno != EEXIST)
		return -errno;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ELOOP ? -ENOTDIR : -errno;
	here = fs_mount_of(dirfd);
	there = fs_mount_of(fd);
	if (fstat(fd, &st))
		err = -errno;
	else if (here && there && here != there)
		err = -EXDEV;
	else if (st.st_uid != uid && !(made && st.st_uid == geteuid()))
		err = -EPERM;
	else if (st.st_uid != uid && fchown(fd, uid, (gid_t)-1))
		err = -errno;
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

static void close_fd(int fd)
{
	if (fd >= 0)
		close(fd);
}

/*
 * A target that cannot see --output (another mount namespace: a container)
 * writes into <its home>/.dynprof/<dynprof pid>, a folder made for its user
 * inside its own filesystem (its home exists there and is writable by it:
 * its socket lives there). dynprof moves each finished PROF_ folder to
 * --output through an fd on that folder, so no path is resolved on the host.
 */
static int result_dir_inside(struct target *t)
{
	char name[32];
	int root, home, dot, dir = -EINVAL;

	root = procfs_open_root(t->pid);
	home = root < 0 ? root : rootfile_open_in(root, t->sock.home, O_RDONLY | O_DIRECTORY);
	dot = home < 0 ? home : make_owned_dir(home, ".dynprof", t->sock.uid);
	snprintf(name, sizeof(name), "%d", (int)getpid());
	/* The first failure is the one said (it was lost before: "Invalid argument"). */
	dir = dot >= 0 ? make_owned_dir(dot, name, t->sock.uid) : dot;
	close_fd(root);
	close_fd(home);
	close_fd(dot);
	return dir;
}

/*
 * The result folder made by the target's helper, as its user: the kernel
 * refuses what that user may not do. -EPERM from the start: dynprof may
 * not enter its namespaces (then the host-side rules stand in).
 */
static int result_dir_by_helper(struct target *t, bool *no_helper)
{
	char sub[32], why[256];
	int rc = 0;

	*no_helper = false;
	if (!t->fsh) {
		rc = fshelper_start(t->pid, &t->fsh, why, sizeof(why));
		if (rc == 0) {
			/* started */
		} else if (!targetfs_host_side_ok(t->pid)) {
			/* Never root's rights in a target's filesystem: this target goes, the others stay. */
			report_target_error(t->pid,
					    "dynprof: pid %d: its result folder cannot be made with its rights (%s); " TARGETFS_REFUSED,
					    t->pid, why);
			return -ECANCELED;
		} else {
			*no_helper = true;
			report_info("pid %d: %s; its result folder is handled from the host side, with its user's rights (dynprof's own)",
				    t->pid, why);
			return rc;
		}
	}
	snprintf(sub, sizeof(sub), "%d", (int)getpid());
	rc = fshelper_result_dir(t->fsh, t->sock.home, ".dynprof", sub);
	if (rc) {
		fshelper_stop(t->fsh);
		t->fsh = NULL;
	}
	return rc;
}

static int result_dir_elsewhere(struct target *t)
{
	bool no_helper;
	int rc = result_dir_by_helper(t, &no_helper);

	if (rc == 0 || !no_helper)
		return rc;
	rc = result_dir_inside(t);
	if (rc < 0)
		return rc;
	t->result_fd = rc;
	snprintf(t->result_host, sizeof(t->result_host), "/proc/self/fd/%d", rc);
	return 0;
}

static int choose_result_dir(const struct session *s, struct target *t, int *shortage)
{
	int rc;

	if (visible_in_target(s->output, t->pid)) {
		snprintf(t->result_inside, sizeof(t->result_inside), "%s", s->output);
		snprintf(t->result_host, sizeof(t->result_host), "%s", s->output);
		return 0;
	}
	if ((size_t)snprintf(t->result_inside, sizeof(t->result_inside), "%.*s/.dynprof/%d",
			     PATH_MAX - 32, t->sock.home, (int)getpid()) >= sizeof(t->result_inside)) {
		report_target_error(t->pid,
				    "dynprof: pid %d: its result folder %s/.dynprof/... is too long",
				    t->pid, t->sock.home);
		return -ENAMETOOLONG;
	}
	t->result_host[0] = '\0';
	rc = result_dir_elsewhere(t);
	if (rc == -EMFILE || rc == -ENFILE)
		*shortage = rc;
	if (rc == -ECANCELED)
		return rc; /* said */
	if (rc < 0) {
		report_target_error(
			t->pid,
			"dynprof: pid %d cannot see %s and no result folder could be made in its home %s: %s",
			t->pid, s->output, t->sock.home,
			rc == -EXDEV ? ".dynprof or its folder is a mount point there, refused" :
			rc == -EPERM ? ".dynprof or its folder exists and is not its user's, refused" :
			rc == -ENOTDIR ? ".dynprof or its folder is a symlink or not a folder, refused" :
					 strerror(-rc));
		return rc;
	}
	report_info("pid %d: in its own filesystem it writes to %s; finished PROF_ folders are moved to %s",
		    t->pid, t->result_inside, s->output);
	return 0;
}

/* Our agent's limits come from its environment (CANN's are fixed; it ignores these). */
static void choose_limits(struct target *t)
{
	char req[24], idle[24], flav[24];
	struct procfs_env_want w[] = { { "DYNPROF_AGENT_MAX_REQUESTS", req, sizeof(req), 0 },
				       { "DYNPROF_AGENT_IDLE_TIMEOUT", idle, sizeof(idle), 0 },
				       { "DYNPROF_AGENT_FLAVOUR", flav, sizeof(flav), 0 } };
	bool read = procfs_environ_get_many(t->pid, w, (int)ARRAY_SIZE(w)) == 0;
	struct server_limits_env env = {
		.max_requests = read && !w[0].rc ? req : NULL,
		.idle_timeout = read && !w[1].rc ? idle : NULL,
		.flavour = read && !w[2].rc ? flav : NULL,
	};

	server_limits_for(&t->limits, t->proto, t->sock.flavour, &env);
}

/*
 * Folders of this process in --output without end_info: a window an
 * earlier client (a dynprof killed with its watchdog, another tool) left
 * open, which CANN 8.5.0 keeps collecting. Said, and kept aside: the
 * stop that ends one reports it (session.c). v2 names carry the pid; a
 * folder of a dead process with the same pid never finishes, so it is
 * never taken for this one's.
 */
static void note_inherited(struct session *s, struct target *t)
{
	char name[NAME_MAX + 1];

	free(t->inherited);
	t->inherited = NULL;
	if (t->proto != PROTO_V2 || target_results_elsewhere(t))
		return;
	for (const char *p = t->prof_seen; output_prof_known_next(&p, name, sizeof(name));) {
		if (winaccount_prof_finished(s->output, name) != 0 ||
		    output_prof_known_add(&t->inherited, name))
			continue;
		report_info("pid %d: %s/%s is not finished: a window an earlier client left open; a stop ends and reports it",
			    t->pid, s->output, name);
	}
}

/*
 * msprof's words (the socket's file name where it says "pid"), then what
 * tells the target apart on this host: a container's job is pid 1 inside,
 * and its socket's name and path are the same in every container.
 */
static void connect_failed(struct target *t, const char *why)
{
	if (!t->container[0])
		target_origin_read(t);
	report_target_error(t->pid,
			    "cannot connect to server for pid %s, maybe server is closed (%s; pid %d%s%s, socket %s)",
			    t->sock.name, why, t->pid, t->container[0] ? " in container " : "",
			    t->container, t->sock.host_path);
}

/*
 * The params text, the same for every target of one generation writing to
 * one result folder in one session: built once and copied (1000 targets:
 * one build of the ~4 KiB JSON, not 1000). An error is built, and said,
 * each time. A new session forgets it (params_forget).
 */
static struct {
	const struct chip_info *chip;
	enum proto_version proto;
	char dir[PATH_MAX];
	char *text;
} last_params;
static pthread_mutex_t last_params_lock = PTHREAD_MUTEX_INITIALIZER; /* joins beside the loop */

void session_params_forget(void)
{
	pthread_mutex_lock(&last_params_lock);
	free(last_params.text);
	last_params.text = NULL;
	pthread_mutex_unlock(&last_params_lock);
}

static char *params_for(const struct session *s, const struct target *t)
{
	const struct chip_info *chip = params_chip(s->opts, s->output);
	char *copy = NULL;

	pthread_mutex_lock(&last_params_lock);
	if (!last_params.text || last_params.chip != chip || last_params.proto != t->proto ||
	    strcmp(last_params.dir, t->result_inside)) {
		char *text = params_build(s->opts, t->proto, t->result_inside, chip);

		if (!text)
			goto out;
		free(last_params.text);
		last_params.text = text;
		last_params.chip = chip;
		last_params.proto = t->proto;
		snprintf(last_params.dir, sizeof(last_params.dir), "%s", t->result_inside);
	}
	copy = strdup(last_params.text);
out:
	pthread_mutex_unlock(&last_params_lock);
	return copy;
}

/* The stand-in's connection: CANN 9.x's protocol, no limits, the folders written in --output. */
static int connect_standin(const struct session *s, struct target *t)
{
	const struct chip_info *chip = params_chip(s->opts, s->output);
	struct standin_desc d = { .pid = t->pid, .nspid = t->nspid, .result_dir = s->output };
	int fd;

	t->proto = PROTO_V2;
	snprintf(t->proto_why, sizeof(t->proto_why), "dynprof's stand-in");
	t->limits = (struct server_limits){ 0 };
	snprintf(t->result_inside, sizeof(t->result_inside), "%s", s->output);
	snprintf(t->result_host, sizeof(t->result_host), "%s", s->output);
	t->params = params_for(s, t);
	if (!t->params)
		return -EINVAL;
	/* msprof's export stops without a chip it knows: the agent's default, the Ascend 910B. */
	d.chip = chip ? chip->id : STANDIN_DEFAULT_CHIP;
	fd = standin_start(&d);
	if (fd < 0) {
		connect_failed(t, strerror(-fd));
		target_drop(t);
		return fd;
	}
	t->fd = fd;
	return 0;
}

int session_connect_prepare(const struct session *s, struct target *t, int *shortage)
{
	char why[PATH_MAX + 128];
	int fd;

	if (t->standin)
		return connect_standin(s, t);
	choose_protocol(t, s->opts->protocol);
	choose_limits(t);
	if (choose_result_dir(s, t, shortage)) {
		target_drop(t);
		return -ENOENT;
	}
	t->params = params_for(s, t);
	if (!t->params)
		return -EINVAL;
	fd = target_socket_connect(&t->sock,
				   t->sock.flavour == SOCK_FLAVOUR_ABSTRACT ? PROTO_V2 : t->proto,
				   why, sizeof(why));
	if (fd == -EMFILE || fd == -ENFILE)
		*shortage = fd;
	if (fd == -EPERM) {
		report_target_error(t->pid, "dynprof: refusing pid %d: %s; nothing was sent",
				    t->pid, why);
		target_drop(t);
		return fd;
	}
	if (fd < 0) {
		connect_failed(t, why);
		target_drop(t);
		return fd;
	}
	t->fd = fd;
	return 0;
}

void session_connect_complete(struct session *s, struct target *t)
{
	target_connected(t);
	/* Folders this process wrote before this run are not ours to report. */
	if (session_scan_prof_dirs(s, t, NULL, NULL)) {
		/* Then older folders may be reported as new later; the look after a stop says its own failure. */
	}
	note_inherited(s, t);
}

static int connect_one(struct session *s, struct target *t)
{
	int shortage = 0, rc = session_connect_prepare(s, t, &shortage);

	session_fd_shortage(s, shortage);
	if (rc == 0) {
		session_connect_complete(s, t);
		session_shape_changed(s); /* a connection for the idle set */
	}
	return rc;
}

/* A server of the other generation, named with the option to use; true when said. */
static bool wrong_generation(const struct target *t)
{
	enum proto_version other = proto_other_generation(t->proto, t->xchg.in, t->xchg.in_done);

	if (other == PROTO_AUTO)
		return false;
	report_target_error(t->pid,
			    "dynprof: pid %d speaks protocol %s, not %s (chosen by %s): use --protocol=%s",
			    t->pid, proto_version_name(other), proto_version_name(t->proto),
			    t->proto_why, proto_version_name(other));
	return true;
}

void session_finish_handshake(struct session *s, struct target *t)
{
	struct target_outcome out;

	target_finish_handshake(t, &out);
	if (out.reply.status == PROTO_OK) {
		if (s->disc && discover_watch(s->disc, t->pid) == -ESRCH) {
			report_plain("server process %d did not create socket, or process has already exited",
				     t->pid);
			target_drop(t);
		}
		return;
	}
	if (wrong_generation(t))
		;
	else if (t->xchg.result == -ETIMEDOUT)
		report_target_error(t->pid,
				    "recv params timeout, server for pid %d has been connected to another client.",
				    t->pid);
	else if (out.reply.status == PROTO_FAIL)
		report_target_error(t->pid, "dynprof: pid %d refused the connection (%s reply: failure)",
				    t->pid, t->proto == PROTO_V1 ? "TEST" : "params");
	else if (out.reply.status == PROTO_DISCONNECTED)
		report_plain("Server disconnected, %s (pid %d)",
			     out.reply.detail[0] ? out.reply.detail : "while connecting", t->pid);
	else
		connect_failed(t, out.reason);
	target_drop(t);
}

/* Attach mode: the join as follow and launch mode give it, command line and cards (read just before). */
static void announce_attached(struct target *t)
{
	target_origin_read(t);
	t->joined = true;
	events_target_join(t->pid, t->nspid, t->container, t->command, t->cards, true, t->standin);
}

/*
 * The first exchange begun the moment its target is connected (the
 * server allows 1 s for the params from its accept): sent now, without
 * waiting; the replies are read when all are sent (handshake_finish).
 */
void session_handshake_begin(struct target *t)
{
	target_prepare_handshake(t, clock_ms() + CONNECT_TIMEOUT_MS);
	exchange_begin(&t->xchg);
}

/* Every begun handshake of the connected targets among [first, first + count) brought home. */
static void handshake_finish(struct session *s, int first, int count)
{
	struct exchange **xs = calloc((size_t)count + 1, sizeof(*xs));
	int n = 0;

	for (int i = first; i < first + count; i++)
		if (!s->targets[i]->dropped && xs)
			xs[n++] = &s->targets[i]->xchg;
	if (!xs) { /* the exchanges are abandoned: the targets cannot be served */
		report_error("dynprof: out of memory connecting to %d targets", count);
		for (int i = first; i < first + count; i++)
			target_drop(s->targets[i]);
		return;
	}
	exchange_run(xs, n);
	free(xs);
	for (int i = first; i < first + count; i++)
		if (!s->targets[i]->dropped)
			session_finish_handshake(s, s->targets[i]);
}

/* Attach mode: the joins announced, once every target is connected. */
static void announce_all(struct session *s)
{
	target_origin_cards(s->targets, s->ntargets, s->opts);
	for (int i = 0; i < s->ntargets; i++)
		if (!s->targets[i]->dropped)
			announce_attached(s->targets[i]);
	for (int i = 0; i < s->ntargets; i++)
		if (!s->targets[i]->dropped)
			hostdata_target_join(s->targets[i]->pid, s->opts);
}

/* QUIT on the old connection, its replies read; the server keeps running. */
void session_quit_connection(struct session *s, struct target *t, int timeout_ms)
{
	struct target_outcome out;
	struct exchange *x = &t->xchg;

	(void)s;
	target_prepare_command(t, PROTO_CMD_QUIT, clock_ms() + timeout_ms);
	exchange_run(&x, 1);
	target_finish_command(t, PROTO_CMD_QUIT, timeout_ms, &out);
	/* v1 follows its QUIT_RSP with DISCONN_RSP "Client request quit." and QUIT_RSP. */
	if (out.reply.status == PROTO_OK && t->proto == PROTO_V1)
		target_drain(t, 2);
	target_close(t);
}

/*
 * The params that cannot fit (an option error) end the run: the targets
 * connected before are let go with their handshake done (so that their
 * servers survive: a 9.x server left without its params stalls), then QUIT.
 */
static void let_go_connected(struct session *s, int upto)
{
	handshake_finish(s, 0, upto);
	for (int j = 0; j < upto; j++)
		if (!s->targets[j]->dropped) {
			session_quit_connection(s, s->targets[j], s->opts->timeout_ms);
			target_drop(s->targets[j]);
		}
}

/*
 * Each target found, connected and handed its params (or v1's TEST) at
 * once, before the next is looked at: with many targets, connecting all
 * of them first would let the first ones' 1 s params timer run out. The
 * replies are read together at the end.
 */
static int connect_all(struct session *s)
{
	for (int i = 0; i < s->ntargets; i++) {
		struct target *t = s->targets[i];
		int rc;

		if (locate(s, t))
			continue;
		rc = connect_one(s, t);
		if (rc == -EINVAL) {
			let_go_connected(s, i);
			return rc;
		}
		if (rc == 0)
			session_handshake_begin(t);
	}
	handshake_finish(s, 0, s->ntargets);
	return 0;
}

/* Say before connecting when the fd limit cannot hold every target. */
static void fd_room(struct session *s)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur >= (rlim_t)(FD_BASE + s->ntargets))
		return;
	s->fd_limit_said = true;
	report_warning("dynprof: %d targets need about %d file descriptors (%d + 1 per target), the limit is %llu (hard %llu): some will not be connected; raise it (ulimit -n)",
		       s->ntargets, FD_BASE + s->ntargets, FD_BASE, (unsigned long long)rl.rlim_cur,
		       (unsigned long long)rl.rlim_max);
}

int session_open(struct session **sp, const struct options *o, const char *output, struct discover *disc)
{
	struct session *s = *sp = calloc(1, sizeof(*s));
	int rc;
	session_params_forget();

	if (!s) {
		report_error("dynprof: cannot open the session: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	s->opts = o;
	offloop_init(&s->jobs);
	s->disc = disc;
	snprintf(s->output, sizeof(s->output), "%s", output);
	rc = resolve_pid_list(s, o);
	if (rc == 0)
		hostdata_prepare(o);
	if (rc == 0)
		watchdog_start(o->timeout_ms); /* before any target connects */
	if (rc)
		return rc;
	fd_room(s);
	session_batch_begin(s); /* --output listed once for all of them */
	rc = connect_all(s);
	session_batch_end(s);
	if (rc)
		return rc;
	announce_all(s);
	if (session_live(s) == 0) {
		report_error("Argument --pid: no valid pid values, stop profiling.");
		return -ENOENT;
	}
	return session_live(s);
}
