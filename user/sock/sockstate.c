// SPDX-License-Identifier: MIT
/* A card holder's socket state, read without connecting (see sockstate.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/unix_diag.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/rootfile.h"
#include "proc/fdscan.h"
#include "sock/netunix.h"
#include "proc/procfs.h"
#include "sock/sockdiag.h"
#include "sock/sockheld.h"
#include "sock/sockstate.h"
#include "sock/sockstate_impl.h"
#include "sock/socklocate.h"
#include "shared/clock.h"
#include "shared/decimal.h"

#define EXACT_QUERIES_MAX 8  /* more accepted sockets than this: one dump instead */
#define OWNER_SCAN_MAX 65536 /* processes looked at for a socket's owner */

static int in_set(const unsigned long *set, int n, unsigned long inode)
{
	for (int i = 0; i < n; i++)
		if (set[i] == inode)
			return 1;
	return 0;
}

int sockstate_owned(int pid, const char *path, struct sock_owned *out)
{
	return sockstate_owned_scan(pid, path, out, NULL, false);
}

/* ---- sock_diag --------------------------------------------------------------- */

/* Said once: without sock_diag, what is read is less exact. */
static void note_no_sockdiag(int err)
{
	static int said;

	if (said++)
		return;
	fprintf(stderr,
		"dynprof: note: sock_diag for unix sockets cannot be used (%s): a finished client's connection reads as busy and a taken-over socket file is found only by connecting\n",
		err == -EOPNOTSUPP ? "kernel module unix_diag not loaded" : strerror(-err));
}

/*
 * One socket the process holds (so it exists): its record. -EOPNOTSUPP when
 * sock_diag cannot say (an exact query answers ENOENT without unix_diag).
 */
static int query_one(int pid, unsigned long ino, uint32_t show, struct sockdiag_rec *rec)
{
	int nl = sockdiag_socket_for(pid), err;

	if (nl < 0)
		return nl;
	err = sockdiag_query_one(nl, (uint32_t)ino, show, rec);
	if (err == -ENOENT || err == -EINVAL)
		err = -EOPNOTSUPP;
	if (err && err != -EOPNOTSUPP)
		sockdiag_socket_drop(nl);
	return err;
}

struct live_ctx {
	const struct sock_owned *owned;
	bool live;
};

static void find_live(void *ctx, const struct sockdiag_rec *r)
{
	struct live_ctx *l = ctx;

	if (in_set(l->owned->connected, l->owned->nconnected, r->ino) && sockdiag_live_peer(r))
		l->live = true;
}

/* 1 when one of the accepted sockets has a client still there, 0 none, <0 unknown. */
static int any_live_client(int pid, const struct sock_owned *owned)
{
	struct live_ctx l = { .owned = owned };
	int nl, err;

	if (owned->nconnected <= EXACT_QUERIES_MAX) {
		for (int i = 0; i < owned->nconnected; i++) {
			struct sockdiag_rec r;

			err = query_one(pid, owned->connected[i], UDIAG_SHOW_PEER, &r);
			if (err == -ENOENT)
				continue; /* closed meanwhile */
			if (err)
				return err;
			if (sockdiag_live_peer(&r))
				return 1;
		}
		return 0;
	}
	nl = sockdiag_socket_for(pid);
	if (nl < 0)
		return nl;
	err = sockdiag_query(nl, 0, 1U << SOCKDIAG_ESTABLISHED, UDIAG_SHOW_PEER, find_live, &l);
	return err ? err : l.live;
}

/* Said once: what cannot be seen without copies of the target's fds. */
static void note_no_copies(int err)
{
	static int said;
	char why[128];

	if (said++)
		return;
	if (err == -EPERM || err == -EACCES)
		snprintf(why, sizeof(why),
			 "copying its fds with pidfd_getfd needs root or CAP_SYS_PTRACE");
	else if (err == -ENOSYS)
		snprintf(why, sizeof(why), "pidfd_getfd needs Linux 5.6");
	else if (err == -E2BIG)
		snprintf(why, sizeof(why), "past %d other sockets of a server's", SOCKHELD_FDS_MAX);
	else
		snprintf(why, sizeof(why), "%s", strerror(-err));
	fprintf(stderr,
		"dynprof: note: a server's connections from other network namespaces than its own cannot be looked at (%s): a container's server held from the host or another container may read as listening\n",
		why);
}

/*
 * A client in another network namespace than the target's (the host's for
 * a container's server, another container's, a pod's) has its connection
 * in its own netns, yet as one of the target's fds (sockheld.h). An
 * abstract name is reached from its own netns only: nothing to look for.
 */
static bool held_elsewhere(const struct sock_location *ts, const struct other_fds *others)
{
	int rc;

	if (ts->flavour == SOCK_FLAVOUR_ABSTRACT)
		return false;
	rc = sockheld_live_client(ts->pid, others->fd, others->n, ts->path);
	if (rc == 0 && others->more)
		rc = -E2BIG;
	if (rc < 0 && rc != -ESRCH)
		note_no_copies(rc);
	return rc > 0;
}

/* ---- is the file the listener's? -------------------------------------------- */

static bool vfs_is(const struct sockdiag_rec *r, const struct stat *st)
{
	return r->has_vfs && r->vfs_ino == (uint32_t)st->st_ino &&
	       sockdiag_same_dev(r->vfs_dev, st->st_dev);
}

struct vfs_match {
	const struct stat *st;
	unsigned long inode;
};

static void match_vfs(void *ctx, const struct sockdiag_rec *r)
{
	struct vfs_match *v = ctx;

	if (!v->inode && r->state == SOCKDIAG_LISTEN && vfs_is(r, v->st))
		v->inode = r->ino;
}

struct holder {
	unsigned long inode;
	bool found;
};

static int holds_inode(void *ctx, int fddir, const char *name, int fd, const char *target)
{
	struct holder *h = ctx;

	(void)fddir;
	(void)name;
	(void)fd;
	if (fdscan_socket_inode(target) == h->inode)
		h->found = true;
	return h->found;
}

/* A process that holds socket `inode`: a walk of /proc, for one error line. */
static void find_holder(struct sock_owner *owner)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int seen = 0;

	if (!d)
		return;
	while ((e = readdir(d)) && seen++ < OWNER_SCAN_MAX) {
		struct holder h = { .inode = owner->inode };
		int pid, piddir;
		uid_t uid;
		int nspid;

		if (decimal_int(e->d_name, 1, INT_MAX, &pid))
			continue;
		piddir = sockstate_open_piddir(pid);
		if (piddir < 0)
			continue;
		if (fdscan(piddir, holds_inode, &h) < 0)
			h.found = false;
		close(piddir);
		if (!h.found)
			continue;
		owner->pid = pid;
		if (procfs_read_status(pid, &uid, &nspid) == 0)
			owner->uid = uid;
		procfs_comm(pid, owner->comm, sizeof(owner->comm));
		break;
	}
	closedir(d);
}

/* The verdict for a file, given what the target holds on its path. */
static enum sock_verdict check_file_owned(const struct sock_location *ts, const struct sock_owned *owned,
					  const struct stat *st, struct sock_owner *owner)
{
	struct sockdiag_rec r;
	struct vfs_match v = { .st = st };
	int nl, err;

	memset(owner, 0, sizeof(*owner));
	if (owned->listener) {
		/* Already told when the listener was found (sockowned.c). */
		r = owned->listener_rec;
		err = owned->listener_known ? 0 :
					      query_one(ts->pid, owned->listener, UDIAG_SHOW_VFS, &r);
		if (err) {
			note_no_sockdiag(err);
			return SOCK_UNSURE;
		}
		if (vfs_is(&r, st))
			return SOCK_OURS;
	}
	/* Not the target's: whose, then? A listener of its netns bound to this file. */
	nl = sockdiag_socket_for(ts->pid);
	err = nl < 0 ? nl : sockdiag_query(nl, 0, 1U << SOCKDIAG_LISTEN, UDIAG_SHOW_VFS, match_vfs, &v);
	if (err) {
		note_no_sockdiag(err);
		return SOCK_UNSURE;
	}
	if (v.inode) {
		owner->inode = v.inode;
		return SOCK_TAKEN;
	}
	/* Held but numbered otherwise (a stacked filesystem?): let the peer check say. */
	return owned->listener ? SOCK_UNSURE : SOCK_NOBODY;
}

enum sock_verdict sockstate_check_file(const struct sock_location *ts, const char *inside_path,
				       const struct stat *st, struct sock_owner *owner)
{
	struct sock_owned *owned = malloc(sizeof(*owned));
	enum sock_verdict v = SOCK_UNSURE;

	memset(owner, 0, sizeof(*owner));
	if (owned && sockstate_owned(ts->pid, inside_path, owned) == 0)
		v = check_file_owned(ts, owned, st, owner);
	free(owned);
	if (v == SOCK_TAKEN)
		find_holder(owner);
	/*
	 * The listener bound to the file is held by the target itself (its
	 * listener record, read earlier, was of another socket: inode numbers
	 * are reused): it is the target's.
	 */
	if (v == SOCK_TAKEN && owner->pid == ts->pid)
		v = SOCK_OURS;
	return v;
}

/* ---- the state ----------------------------------------------------------------- */

/* The socket file, looked at inside the target's root (no symlink followed). */
static int stat_socket_file(const struct sock_location *ts, struct stat *st)
{
	int rootfd = procfs_open_root(ts->pid), homefd, err = 0;

	if (rootfd < 0)
		return rootfd;
	homefd = rootfile_open_in(rootfd, ts->home, O_PATH | O_DIRECTORY);
	close(rootfd);
	if (homefd < 0)
		return homefd;
	if (fstatat(homefd, ts->name, st, AT_SYMLINK_NOFOLLOW) < 0)
		err = -errno;
	close(homefd);
	return err;
}

/* The state, once the process is known to listen on the path (`owned`); *ours: the file, if its listener's. */
static int classify_owned(const struct sock_location *ts, const struct sock_owned *owned,
			  const struct other_fds *others, enum pm_socket_state *state, struct stat *ours)
{
	int live;

	if (ts->flavour != SOCK_FLAVOUR_ABSTRACT) {
		struct sock_owner other;
		struct stat st;
		enum sock_verdict v;

		/* The file at the path must be this listener's, not a successor's. */
		v = stat_socket_file(ts, &st) ? SOCK_NOBODY : check_file_owned(ts, owned, &st, &other);
		if (v == SOCK_TAKEN || v == SOCK_NOBODY)
			return 0;
		if (v == SOCK_OURS)
			*ours = st;
	}
	*state = PM_SOCKET_LISTENING;
	if (owned->nconnected) {
		live = any_live_client(ts->pid, owned);
		if (live < 0)
			note_no_sockdiag(live);
		if (live != 0)
			*state = PM_SOCKET_BUSY;
	}
	if (*state == PM_SOCKET_LISTENING && held_elsewhere(ts, others))
		*state = PM_SOCKET_BUSY;
	return 0;
}

static int classify(const struct sock_location *ts, enum pm_socket_state *state, struct stat *ours)
{
	/* ~2 KiB and ~64 KiB: off the stack. */
	struct sock_owned *owned = malloc(sizeof(*owned));
	struct other_fds *others = malloc(sizeof(*others));
	int err = -ENOMEM;

	*state = PM_SOCKET_NONE;
	if (owned && others)
		err = sockstate_owned_scan(ts->pid, ts->path, owned, others, true);
	if (!err && owned->listener)
		err = classify_owned(ts, owned, others, state, ours);
	free(owned);
	free(others);
	return err;
}

/* sockstate_last_listener's: one per thread (the model's loop, a join's worker), by value. */
static __thread struct sock_location last;
static __thread int64_t last_ms;

static void keep_listener(const struct sock_location *ts, const struct stat *ours)
{
	last = *ts;
	last.file_dev = ours->st_ino ? (unsigned long long)ours->st_dev : 0;
	last.file_ino = (unsigned long long)ours->st_ino;
	last_ms = clock_ms();
}

int sockstate_last_listener(int pid, unsigned long long start_time, int max_age_ms,
			    struct sock_location *out)
{
	if (!last_ms || last.pid != pid || (start_time && last.start_time != start_time) ||
	    clock_ms() - last_ms > max_age_ms)
		return -ENOENT;
	*out = last;
	return 0;
}

int sockstate_read(int pid, struct sockstate *out)
{
	/* ~13 KiB: off the stack, which listeners' callers may keep small. */
	struct sock_location *ts = malloc(sizeof(*ts));
	int err;

	memset(out, 0, sizeof(*out));
	out->state = PM_SOCKET_NONE;
	if (!ts)
		return -ENOMEM;
	err = socklocate_find(pid, ts);
	if (err == -ESRCH || err == -ENOMEM || err == -EINPROGRESS) { /* what was known stays */
		free(ts);
		return err;
	}
	snprintf(out->home, sizeof(out->home), "%s", ts->home);
	if (err == 0) {
		struct stat ours = { 0 };

		err = classify(ts, &out->state, &ours);
		if (!err && out->state != PM_SOCKET_NONE) {
			out->flavour = ts->flavour;
			snprintf(out->path, sizeof(out->path), "%s", ts->path);
			snprintf(out->host_path, sizeof(out->host_path), "%s", ts->host_path);
		}
		if (!err && out->state == PM_SOCKET_LISTENING)
			keep_listener(ts, &ours);
	} else {
		err = 0; /* no file (ENOENT, ELOOP, ENOTSOCK) or not allowed to look: NONE */
	}
	free(ts);
	return err;
}
