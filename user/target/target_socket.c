// SPDX-License-Identifier: MIT
/* Finding and trusting a target's dynamic-profiling socket (see target_socket.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stddef.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "shared/fdio.h"
#include "dynprof/proto.h"
#include "proc/procfs.h"
#include "target/target_socket.h"
#include "common/errbuf.h"
#include "shared/decimal.h"
#include "shared/array_size.h"

#define CONNECT_BACKLOG_WAIT_MS 1000 /* a full backlog: retry this long */
#define CONNECT_RETRY_MS        10
#define NSS_BUF_MAX             (1024 * 1024)

/* A human reason; a long path may cut it short, which is fine for a message. */
#define WHY(ts, ...) ((void)errbuf_set((ts)->why, sizeof((ts)->why), __VA_ARGS__))

static const char *const socket_prefixes[] = {
	DYNPROF_SOCKET_PREFIX,
	DYNPROF_SOCKET_PREFIX_ALT,
};

/* A key as CANN accepts it: a positive decimal integer, nothing else. */
static int parse_key(const char *s, int *key)
{
	return decimal_int(s, 1, INT_MAX, key);
}

/* Set name, path and host_path for `prefix` + `key` under ts->home. */
static int fill_paths(struct target_socket *ts, const char *prefix, int key)
{
	int n;

	n = snprintf(ts->name, sizeof(ts->name), "%s%d", prefix, key);
	if (n < 0 || (size_t)n >= sizeof(ts->name))
		return -ENAMETOOLONG;
	if (!ts->home[0]) {
		ts->path[0] = ts->host_path[0] = '\0';
		return 0;
	}
	n = snprintf(ts->path, sizeof(ts->path), "%s/%s",
		     strcmp(ts->home, "/") ? ts->home : "", ts->name);
	if (n < 0 || (size_t)n >= sizeof(ts->path))
		return -ENAMETOOLONG;
	n = snprintf(ts->host_path, sizeof(ts->host_path), "/proc/%d/root%s", ts->pid, ts->path);
	if (n < 0 || (size_t)n >= sizeof(ts->host_path))
		return -ENAMETOOLONG;
	return 0;
}

/* 1 when rootfd is the very folder that is dynprof's own "/". */
static int is_our_root(int rootfd)
{
	struct stat a, b;

	return fstat(rootfd, &a) == 0 && stat("/", &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

/*
 * The home from the name service (LDAP, SSSD...), as getpwuid() in the
 * target gives it when the uid is not in /etc/passwd. Only meaningful when
 * the target shares dynprof's root and so, most likely, its nsswitch setup.
 */
static int nss_home(uid_t uid, char *home, size_t len)
{
	size_t bufsz = 16384;
	struct passwd pw, *res = NULL;
	int err;

	for (;;) {
		char *buf = malloc(bufsz);
		size_t hl;

		if (!buf)
			return -ENOMEM;
		err = getpwuid_r(uid, &pw, buf, bufsz, &res);
		if (err == ERANGE && bufsz < NSS_BUF_MAX) {
			free(buf);
			bufsz *= 2;
			continue;
		}
		if (err || !res || !pw.pw_dir || !pw.pw_dir[0]) {
			free(buf);
			return err > 0 ? -err : -ENOENT;
		}
		hl = strlen(pw.pw_dir);
		while (hl > 1 && pw.pw_dir[hl - 1] == '/')
			hl--;
		if (hl >= len) {
			free(buf);
			return -ENAMETOOLONG;
		}
		memcpy(home, pw.pw_dir, hl);
		home[hl] = '\0';
		free(buf);
		return 0;
	}
}

/* The keys to try, in order, duplicates skipped. Returns how many. */
static int collect_keys(struct target_socket *ts, int keys[2])
{
	char val[32];
	int n = 0, key, err;

	err = procfs_environ_get(ts->pid, DYNPROF_KEY_ENV, val, sizeof(val));
	if (err == -EACCES || err == -EPERM) {
		WHY(ts, "cannot read /proc/%d/environ: permission denied (run as root or as uid %u)",
		    ts->pid, (unsigned)ts->uid);
		return -EACCES;
	}
	if (err == -ESRCH) {
		WHY(ts, "process %d has exited", ts->pid);
		return -ESRCH;
	}
	/* Unset, too long or not a positive integer: CANN ignores it too. */
	if (err == 0 && parse_key(val, &key) == 0)
		keys[n++] = key;
	if (n == 0 || keys[0] != ts->nspid)
		keys[n++] = ts->nspid;
	return n;
}

static int find_home(struct target_socket *ts, int rootfd)
{
	int err = procfs_inner_uid(ts->pid, ts->uid, &ts->inner_uid);

	if (err == -ESRCH) {
		WHY(ts, "process %d has exited", ts->pid);
		return err;
	}
	if (err) {
		WHY(ts, "uid %u of pid %d has no uid inside its user namespace", (unsigned)ts->uid,
		    ts->pid);
		return -ENOENT;
	}
	err = passwd_home_at(rootfd, ts->inner_uid, ts->home, sizeof(ts->home));
	if (err == -ENOENT && ts->inner_uid == ts->uid && is_our_root(rootfd))
		err = nss_home(ts->uid, ts->home, sizeof(ts->home));
	if (err == 0)
		return 0;
	ts->home[0] = '\0';
	if (err == -ENOENT)
		WHY(ts, "uid %u has no home in the passwd file of pid %d", (unsigned)ts->inner_uid,
		    ts->pid);
	else if (err == -EACCES)
		WHY(ts, "cannot read /proc/%d/root/etc/passwd: permission denied", ts->pid);
	else
		WHY(ts, "cannot read /proc/%d/root/etc/passwd: %s", ts->pid, strerror(-err));
	return err;
}

/* Look for the candidates in the open home folder. */
static int find_in_home(struct target_socket *ts, int homefd, const int *keys, int nkeys)
{
	int first_bad = 0, bad_key = 0;
	const char *bad_prefix = NULL;

	for (int k = 0; k < nkeys; k++) {
		for (size_t p = 0; p < ARRAY_SIZE(socket_prefixes); p++) {
			struct stat st;
			int err = fill_paths(ts, socket_prefixes[p], keys[k]);

			if (err) {
				WHY(ts, "socket path under %s is too long", ts->home);
				return err;
			}
			if (fstatat(homefd, ts->name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
				err = -errno;
				if (err == -ENOENT)
					continue;
				WHY(ts, "cannot look at %s: %s", ts->host_path, strerror(-err));
				return err == -EPERM ? -EACCES : err;
			}
			if (S_ISSOCK(st.st_mode)) {
				ts->key = keys[k];
				return 0;
			}
			if (!first_bad) {
				first_bad = S_ISLNK(st.st_mode) ? -ELOOP : -ENOTSOCK;
				bad_prefix = socket_prefixes[p];
				bad_key = keys[k];
			}
		}
	}
	if (first_bad) {
		fill_paths(ts, bad_prefix, bad_key);
		ts->key = bad_key;
		WHY(ts, "%s is %s, not a socket: not used", ts->host_path,
		    first_bad == -ELOOP ? "a symlink" : "another kind of file");
		return first_bad;
	}
	fill_paths(ts, socket_prefixes[0], keys[0]);
	ts->key = keys[0];
	if (nkeys > 1)
		WHY(ts, "no %s (nor %s%d, nor the %s names) in %s", ts->name,
		    socket_prefixes[0], keys[1], socket_prefixes[1], ts->home);
	else
		WHY(ts, "no %s (nor %s%d) in %s", ts->name, socket_prefixes[1], keys[0], ts->home);
	return -ENOENT;
}

int target_socket_find(int pid, struct target_socket *out)
{
	unsigned long long start2 = 0;
	int keys[2], nkeys, rootfd, homefd, err;

	memset(out, 0, sizeof(*out));
	out->pid = pid;
	err = procfs_start_time(pid, &out->start_time);
	if (!err)
		err = procfs_read_status(pid, &out->uid, &out->nspid);
	if (err) {
		if (err == -ESRCH)
			WHY(out, "no process %d", pid);
		else
			WHY(out, "cannot read /proc/%d: %s", pid, strerror(-err));
		return err;
	}
	out->inner_uid = out->uid;

	/* Until more is known, name at least holds the name CANN v1 would use. */
	fill_paths(out, socket_prefixes[0], out->nspid);
	out->key = out->nspid;
	nkeys = collect_keys(out, keys);
	if (nkeys < 0)
		return nkeys;
	fill_paths(out, socket_prefixes[0], keys[0]);
	out->key = keys[0];

	rootfd = procfs_open_root(pid);
	if (rootfd < 0) {
		if (rootfd == -ESRCH)
			WHY(out, "process %d has exited", pid);
		else
			WHY(out, "cannot open /proc/%d/root: %s", pid, strerror(-rootfd));
		return rootfd == -EPERM ? -EACCES : rootfd;
	}
	err = find_home(out, rootfd);
	if (err) {
		close(rootfd);
		return err;
	}
	fill_paths(out, socket_prefixes[0], keys[0]);

	homefd = procfs_open_in_root(rootfd, out->home, O_PATH | O_DIRECTORY);
	close(rootfd);
	if (homefd < 0) {
		err = homefd;
		if (err == -ENOENT || err == -ENOTDIR) {
			WHY(out, "home %s of uid %u does not exist in the root of pid %d", out->home,
			    (unsigned)out->inner_uid, pid);
			return -ENOENT;
		}
		WHY(out, "cannot open home %s in the root of pid %d: %s", out->home, pid,
		    strerror(-err));
		return err == -EPERM ? -EACCES : err;
	}
	err = find_in_home(out, homefd, keys, nkeys);
	close(homefd);
	if (err)
		return err;

	/* Everything above described one process, not a successor on its pid. */
	if (procfs_start_time(pid, &start2) || start2 != out->start_time) {
		WHY(out, "process %d exited during the look-up", pid);
		return -ESRCH;
	}
	out->why[0] = '\0';
	return 0;
}

/* ---- connect ---------------------------------------------------------------- */

/* The target is gone when its pid is free or names a younger process. */
static int same_process(const struct target_socket *ts)
{
	unsigned long long st;

	if (procfs_start_time(ts->pid, &st))
		return 0;
	return !ts->start_time || st == ts->start_time;
}

/*
 * connect() with a bounded wait. A non-blocking AF_UNIX connect does not
 * queue when the listener's backlog is full: it fails with EAGAIN and must
 * be retried; EINPROGRESS (other families, or kernels that report it) is
 * waited for with poll(POLLOUT) then SO_ERROR.
 */
static int connect_bounded(int fd, const struct sockaddr_un *addr, socklen_t alen)
{
	int64_t deadline = clock_ms() + CONNECT_BACKLOG_WAIT_MS;

	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };
		int err = 0, n;
		socklen_t elen = sizeof(err);

		if (connect(fd, (const struct sockaddr *)addr, alen) == 0 || errno == EISCONN)
			return 0;
		switch (errno) {
		case EINTR:
			continue;
		case EAGAIN:
			if (clock_ms_left(deadline) == 0)
				return -EAGAIN;
			poll(NULL, 0, CONNECT_RETRY_MS);
			continue;
		case EINPROGRESS:
		case EALREADY:
			break;
		default:
			return -errno;
		}
		do
			n = poll(&pfd, 1, clock_ms_left(deadline));
		while (n < 0 && errno == EINTR);
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ETIMEDOUT;
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) < 0)
			return -errno;
		return -err;
	}
}

/* Open the home again, inside the target's root, as find did. */
static int reopen_home(const struct target_socket *ts, char *why, size_t whylen)
{
	int rootfd = procfs_open_root(ts->pid), homefd;

	if (rootfd < 0) {
		if (rootfd == -ESRCH) {
			snprintf(why, whylen, "process %d has exited", ts->pid);
			return -ENOENT;
		}
		snprintf(why, whylen, "cannot open /proc/%d/root: %s", ts->pid, strerror(-rootfd));
		return rootfd;
	}
	homefd = procfs_open_in_root(rootfd, ts->home, O_PATH | O_DIRECTORY);
	close(rootfd);
	if (homefd == -ENOENT || homefd == -ENOTDIR) {
		snprintf(why, whylen, "home %s no longer exists in the root of pid %d", ts->home,
			 ts->pid);
		return -ENOENT;
	}
	if (homefd < 0)
		snprintf(why, whylen, "cannot open home %s: %s", ts->home, strerror(-homefd));
	return homefd;
}

/* One candidate socket file: its name and how dynprof's messages show it. */
struct candidate {
	const char *name;
	char host_path[PATH_MAX + 160];
};

static void candidate_init(struct candidate *c, const struct target_socket *ts, const char *name)
{
	c->name = name;
	/* For messages only: cut short if ever too long. */
	(void)errbuf_set(c->host_path, sizeof(c->host_path), "/proc/%d/root%s/%s", ts->pid,
			 strcmp(ts->home, "/") ? ts->home : "", name);
}

/* The name must still be a socket, not a symlink or anything else. */
static int check_socket_file(const struct target_socket *ts, const struct candidate *c,
			     int homefd, char *why, size_t whylen)
{
	struct stat st;

	if (fstatat(homefd, c->name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		int err = -errno;

		if (err == -ENOENT)
			snprintf(why, whylen, "socket %s no longer exists%s", c->host_path,
				 procfs_alive(ts->pid) ? "" : ": the process has exited");
		else
			snprintf(why, whylen, "cannot look at %s: %s", c->host_path, strerror(-err));
		return err;
	}
	if (S_ISSOCK(st.st_mode))
		return 0;
	snprintf(why, whylen, "%s is %s, not a socket", c->host_path,
		 S_ISLNK(st.st_mode) ? "a symlink" : "another kind of file");
	return S_ISLNK(st.st_mode) ? -ELOOP : -ENOTSOCK;
}

static void explain_connect_error(const struct target_socket *ts, const struct candidate *c,
				  int err, char *why, size_t whylen)
{
	int alive = same_process(ts);

	switch (-err) {
	case ECONNREFUSED:
		if (alive)
			snprintf(why, whylen, "connection refused: nobody listens on %s (stale socket file)",
				 c->host_path);
		else
			snprintf(why, whylen, "connection refused: process %d has exited", ts->pid);
		break;
	case ENOENT:
		snprintf(why, whylen, "socket %s vanished%s", c->host_path,
			 alive ? "" : ": the process has exited");
		break;
	case EAGAIN:
		snprintf(why, whylen, "the listen backlog of %s stayed full for %d ms",
			 c->host_path, CONNECT_BACKLOG_WAIT_MS);
		break;
	case ETIMEDOUT:
		snprintf(why, whylen, "connecting to %s timed out", c->host_path);
		break;
	case EACCES:
	case EPERM:
		snprintf(why, whylen, "permission denied connecting to %s", c->host_path);
		break;
	default:
		snprintf(why, whylen, "cannot connect to %s: %s", c->host_path, strerror(-err));
		break;
	}
}

/*
 * SO_PEERCRED names the process that called listen() on the socket: its
 * pid as seen from the pid namespace of the caller of getsockopt (0 when
 * not visible there). dynprof runs in the initial pid namespace, where
 * ts->pid (from /proc) lives too, so the two compare directly.
 */
static int check_peer(const struct target_socket *ts, const struct candidate *c, int fd,
		      char *why, size_t whylen)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	char comm[64];

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
		int err = -errno;

		snprintf(why, whylen, "cannot read the peer of %s: %s", c->host_path, strerror(-err));
		return err;
	}
	if (cred.pid != ts->pid) {
		procfs_comm(cred.pid, comm, sizeof(comm));
		snprintf(why, whylen, "socket %s is served by pid %d (%s, uid %u), not by pid %d",
			 c->host_path, (int)cred.pid, comm, (unsigned)cred.uid, ts->pid);
		return -EPERM;
	}
	if (!same_process(ts)) {
		if (procfs_alive(ts->pid)) {
			snprintf(why, whylen, "pid %d now belongs to another process than the one found",
				 ts->pid);
			return -EPERM;
		}
		snprintf(why, whylen, "process %d has exited", ts->pid);
		return -ENOENT;
	}
	return 0;
}

/* Connect to one candidate in the open home and check who serves it. */
static int connect_candidate(const struct target_socket *ts, const struct candidate *c,
			     int homefd, char *why, size_t whylen)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd, err, n;

	err = check_socket_file(ts, c, homefd, why, whylen);
	if (err)
		return err;
	/* Through the home's fd: short whatever the home is (sun_path is 108 bytes). */
	n = snprintf(addr.sun_path, sizeof(addr.sun_path), "/proc/self/fd/%d/%s", homefd, c->name);
	if (n < 0 || (size_t)n >= sizeof(addr.sun_path)) {
		snprintf(why, whylen, "socket name %s is too long", c->name);
		return -ENAMETOOLONG;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		err = -errno;
		snprintf(why, whylen, "socket: %s", strerror(-err));
		return err;
	}
	/*
	 * The name was a socket a moment ago; if it is swapped for a symlink now,
	 * connect follows it, but then SO_PEERCRED below names the impostor.
	 */
	err = connect_bounded(fd, &addr,
			      (socklen_t)(offsetof(struct sockaddr_un, sun_path) + (size_t)n + 1));
	if (err) {
		close(fd);
		explain_connect_error(ts, c, err, why, whylen);
		return err;
	}
	err = check_peer(ts, c, fd, why, whylen);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

int target_socket_connect(const struct target_socket *ts, char *why, size_t whylen)
{
	char dummy[8], alt_why[256], names[4][128];
	struct candidate c;
	int homefd, fd, nnames = 0;

	if (!why || whylen == 0) {
		why = dummy;
		whylen = sizeof(dummy);
	}
	why[0] = '\0';
	if (!ts->home[0] || !ts->name[0]) {
		snprintf(why, whylen, "no socket was found for pid %d", ts->pid);
		return -EINVAL;
	}
	if (!same_process(ts)) {
		snprintf(why, whylen, "process %d has exited", ts->pid);
		return -ENOENT;
	}
	homefd = reopen_home(ts, why, whylen);
	if (homefd < 0)
		return homefd;

	candidate_init(&c, ts, ts->name);
	fd = connect_candidate(ts, &c, homefd, why, whylen);

	/*
	 * The found socket is served by someone else, or by nobody: another
	 * process with the same DYNAMIC_PROFILING_KEY_PID took the path over
	 * (CANN unlinks before bind), or the file is stale. CANN falls back to
	 * its own pid when the key's path is busy, so the remaining candidates
	 * may still lead to the target. The first failure is the one reported.
	 */
	if (fd == -EPERM || fd == -ECONNREFUSED) {
		int keys[2] = { ts->key, ts->nspid };

		for (int k = 0; k < 2; k++) {
			if (k == 1 && ts->nspid == ts->key)
				break;
			for (size_t p = 0; p < ARRAY_SIZE(socket_prefixes); p++)
				snprintf(names[nnames++], sizeof(names[0]), "%s%d", socket_prefixes[p],
					 keys[k]);
		}
		for (int i = 0; i < nnames; i++) {
			int alt;

			if (!strcmp(names[i], ts->name))
				continue;
			candidate_init(&c, ts, names[i]);
			alt = connect_candidate(ts, &c, homefd, alt_why, sizeof(alt_why));
			if (alt >= 0) {
				fd = alt;
				why[0] = '\0';
				break;
			}
		}
	}
	close(homefd);
	return fd;
}
