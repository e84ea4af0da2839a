// SPDX-License-Identifier: MIT
/* Connecting to a located socket and trusting its peer (see target_socket.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "shared/clock.h"
#include "ns/netns_socket.h"
#include "proc/procfs.h"
#include "sock/sockstate.h"
#include "session/target_leave.h"
#include "session/target_socket.h"
#include "common/errbuf.h"
#include "common/rootfile.h"
#include "shared/array_size.h"

#define CONNECT_BACKLOG_WAIT_MS 1000 /* a full backlog: retry this long */
#define CONNECT_RETRY_MS 10

/* The target is gone when its pid is free or names a younger process. */
static int same_process(const struct sock_location *ts)
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
static int reopen_home(const struct sock_location *ts, char *why, size_t whylen)
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
	homefd = rootfile_open_in(rootfd, ts->home, O_PATH | O_DIRECTORY);
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
/* What a socket file that nobody serves is, for the user who finds one. */
#define STALE_FILE                                                                              \
	"a stale socket file that nobody serves, left by an earlier server of that name which " \
	"ended without removing it (killed by a signal, or crashed)"

struct candidate {
	const char *name;
	char host_path[PATH_MAX + 160];
	char inside[PATH_MAX + 160]; /* the path as the target sees it (net/unix) */
	struct stat st;              /* the file, once check_socket_file saw it */
};

static void candidate_init(struct candidate *c, const struct sock_location *ts, const char *name)
{
	c->name = name;
	/* For messages only: cut short if ever too long. */
	(void)errbuf_set(c->host_path, sizeof(c->host_path), "/proc/%d/root%s/%s", ts->pid,
			 strcmp(ts->home, "/") ? ts->home : "", name);
	(void)errbuf_set(c->inside, sizeof(c->inside), "%s/%s",
			 strcmp(ts->home, "/") ? ts->home : "", name);
}

/* The name must still be a socket, not a symlink or anything else. */
static int check_socket_file(const struct sock_location *ts, struct candidate *c, int homefd,
			     char *why, size_t whylen)
{
	struct stat *st = &c->st;

	if (fstatat(homefd, c->name, st, AT_SYMLINK_NOFOLLOW) < 0) {
		int err = -errno;

		if (err == -ENOENT)
			snprintf(why, whylen, "socket %s no longer exists%s", c->host_path,
				 procfs_alive(ts->pid) ? "" : ": the process has exited");
		else
			snprintf(why, whylen, "cannot look at %s: %s", c->host_path, strerror(-err));
		return err;
	}
	if (S_ISSOCK(st->st_mode))
		return 0;
	snprintf(why, whylen, "%s is %s, not a socket", c->host_path,
		 S_ISLNK(st->st_mode) ? "a symlink" : "another kind of file");
	return S_ISLNK(st->st_mode) ? -ELOOP : -ENOTSOCK;
}

static void explain_connect_error(const struct sock_location *ts, const struct candidate *c,
				  int err, char *why, size_t whylen)
{
	int alive = same_process(ts);

	switch (-err) {
	case ECONNREFUSED:
		if (alive)
			snprintf(why, whylen, "connection refused: %s is " STALE_FILE, c->inside);
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
static int check_peer(const struct sock_location *ts, const struct candidate *c, int fd, char *why,
		      size_t whylen)
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
			snprintf(why, whylen,
				 "pid %d now belongs to another process than the one found", ts->pid);
			return -EPERM;
		}
		snprintf(why, whylen, "process %d has exited", ts->pid);
		return -ENOENT;
	}
	return 0;
}

/* Once connected: the peer must be the target, else leave so that it survives. */
static int connected(const struct sock_location *ts, const struct candidate *c, int fd,
		     enum proto_version proto, char *why, size_t whylen)
{
	int err = check_peer(ts, c, fd, why, whylen);

	if (err) {
		target_leave(fd, proto);
		return err;
	}
	return fd;
}

static void explain_owner(const struct sock_location *ts, const struct candidate *c,
			  const struct sock_owner *o, char *why, size_t whylen)
{
	if (o->pid)
		snprintf(why, whylen, "socket %s is served by pid %d (%s, uid %u), not by pid %d",
			 c->host_path, o->pid, o->comm, (unsigned)o->uid, ts->pid);
	else
		snprintf(why, whylen,
			 "socket %s is bound by another process's listener (socket inode %lu), not by pid %d",
			 c->host_path, o->inode, ts->pid);
}

/*
 * Whose the file is, before any connect: a connection that is not used
 * ends a CANN server's accept loop for good. -EPERM (another process's),
 * -ECONNREFUSED (the target does not listen on it), 0 (connect).
 */
static int check_owner(const struct sock_location *ts, const struct candidate *c, char *why, size_t whylen)
{
	struct sock_owner owner;

	/* The very file the model found bound to the target's listener a moment ago (sockstate_last_listener). */
	if (ts->file_ino && (unsigned long long)c->st.st_ino == ts->file_ino &&
	    (unsigned long long)c->st.st_dev == ts->file_dev && !strcmp(c->name, ts->name))
		return 0;
	switch (sockstate_check_file(ts, c->inside, &c->st, &owner)) {
	case SOCK_OURS:
	case SOCK_UNSURE:
		return 0;
	case SOCK_TAKEN:
		explain_owner(ts, c, &owner, why, whylen);
		return -EPERM;
	case SOCK_NOBODY:
		break;
	}
	if (same_process(ts))
		snprintf(why, whylen, "pid %d does not listen on %s: " STALE_FILE, ts->pid, c->inside);
	else
		snprintf(why, whylen, "process %d has exited", ts->pid);
	return -ECONNREFUSED;
}

/* Connect to one candidate in the open home and check who serves it. */
static int connect_candidate(const struct sock_location *ts, struct candidate *c, int homefd,
			     enum proto_version proto, char *why, size_t whylen)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd, err, n;

	err = check_socket_file(ts, c, homefd, why, whylen);
	if (!err)
		err = check_owner(ts, c, why, whylen);
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
	 * The name was the target's socket a moment ago; if it is swapped for a
	 * symlink or another server now, connect follows it, but then
	 * SO_PEERCRED below names the impostor.
	 */
	err = connect_bounded(fd, &addr,
			      (socklen_t)(offsetof(struct sockaddr_un, sun_path) + (size_t)n + 1));
	if (err) {
		close(fd);
		explain_connect_error(ts, c, err, why, whylen);
		return err;
	}
	return connected(ts, c, fd, proto, why, whylen);
}

/*
 * \0dyn_prof_sock_<key> in the target's network namespace: the socket is
 * made there (a helper joins it), the name given with its exact length.
 */
static int connect_abstract(const struct sock_location *ts, enum proto_version proto, char *why,
			    size_t whylen)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct sock_owned owned;
	struct candidate c = { .name = ts->name };
	size_t len = strlen(ts->name);
	int fd, err;

	snprintf(c.host_path, sizeof(c.host_path), "%s", ts->path);
	if (len + 1 > sizeof(addr.sun_path)) {
		snprintf(why, whylen, "socket name %s is too long", ts->name);
		return -ENAMETOOLONG;
	}
	err = sockstate_owned(ts->pid, ts->path, &owned);
	if (err == -ESRCH || (!err && !owned.listener && !procfs_alive(ts->pid))) {
		snprintf(why, whylen, "process %d has exited", ts->pid);
		return -ENOENT;
	}
	if (!err && !owned.listener) {
		snprintf(why, whylen, "pid %d no longer listens on %s", ts->pid, ts->path);
		return -ECONNREFUSED;
	}
	fd = netns_socket_of(ts->pid, AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		if (fd == -EPERM || fd == -EACCES)
			snprintf(why, whylen,
				 "cannot enter the network namespace of pid %d to reach %s (needs CAP_SYS_ADMIN over it)",
				 ts->pid, ts->path);
		else
			snprintf(why, whylen,
				 "cannot make a socket in the network namespace of pid %d: %s",
				 ts->pid, strerror(-fd));
		return fd == -EACCES ? -EPERM : fd;
	}
	memcpy(addr.sun_path + 1, ts->name, len);
	err = connect_bounded(fd, &addr, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len));
	if (err) {
		close(fd);
		explain_connect_error(ts, &c, err, why, whylen);
		return err;
	}
	return connected(ts, &c, fd, proto, why, whylen);
}

int target_socket_connect(const struct sock_location *ts, enum proto_version proto, char *why, size_t whylen)
{
	char dummy[8], alt_why[256], names[4][SOCKLOCATE_NAME_MAX];
	struct candidate c;
	int homefd, fd, nnames = 0;

	if (!why || whylen == 0) {
		why = dummy;
		whylen = sizeof(dummy);
	}
	why[0] = '\0';
	if (!ts->name[0] || (ts->flavour != SOCK_FLAVOUR_ABSTRACT && !ts->home[0])) {
		snprintf(why, whylen, "no socket was found for pid %d", ts->pid);
		return -EINVAL;
	}
	if (!same_process(ts)) {
		snprintf(why, whylen, "process %d has exited", ts->pid);
		return -ENOENT;
	}
	if (ts->flavour == SOCK_FLAVOUR_ABSTRACT)
		return connect_abstract(ts, proto, why, whylen);
	homefd = reopen_home(ts, why, whylen);
	if (homefd < 0)
		return homefd;

	candidate_init(&c, ts, ts->name);
	fd = connect_candidate(ts, &c, homefd, proto, why, whylen);

	/*
	 * The found socket is served by someone else, or by nobody: another
	 * process with the same DYNAMIC_PROFILING_KEY_PID took the path over
	 * (CANN unlinks before bind), or the file is stale. CANN falls back to
	 * its own pid when the key's path is busy, so the remaining candidates
	 * may still lead to the target. The first failure is the one reported.
	 */
	if (fd == -EPERM || fd == -ECONNREFUSED) {
		nnames = socklocate_names(ts, names, ARRAY_SIZE(names));
		for (int i = 0; i < nnames; i++) {
			int alt;

			if (!strcmp(names[i], ts->name))
				continue;
			candidate_init(&c, ts, names[i]);
			alt = connect_candidate(ts, &c, homefd, proto, alt_why, sizeof(alt_why));
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
