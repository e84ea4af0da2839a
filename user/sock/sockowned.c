// SPDX-License-Identifier: MIT
/*
 * Which of a process's sockets are bound to a path (see sockstate.h).
 *
 * The process's own fds first ("socket:[INODE]"), then sock_diag about
 * those sockets alone, in the process's network namespace: its name
 * (UNIX_DIAG_NAME) and state say listener or accepted socket on the path.
 * A few fds are asked about one by one, many in one dump of the
 * namespace. /proc/<pid>/net/unix, which lists every Unix socket of the
 * namespace, is read only without sock_diag: read once per target, with
 * 1000 targets connected (a listener and two ends of a connection each)
 * it is 3000 rows each time, and connecting to 1000 targets took seconds.
 *
 * What the process holds is proven by its fd table either way; a socket
 * that sock_diag does not find in the namespace (TCP, another netns,
 * closed meanwhile) is one of its "other" sockets, as when it has no row.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/unix_diag.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc/fdscan.h"
#include "sock/netunix.h"
#include "sock/sockdiag.h"
#include "sock/sockstate_impl.h"

/*
 * More socket fds than this: one dump instead of a query each. A query
 * walks every Unix socket of the namespace in the kernel (~40 ns each:
 * 350 us with 8000), a dump of them all with names takes about 5 walks.
 */
#define EXACT_FDS_MAX 4
#define WHAT_SHOWN \
	(UDIAG_SHOW_NAME | UDIAG_SHOW_VFS | UDIAG_SHOW_PEER) /* and always its shutdown */

enum role { ROLE_OTHER, ROLE_LISTENER, ROLE_ACCEPTED };

int sockstate_open_piddir(int pid)
{
	char dir[32];
	int fd;

	snprintf(dir, sizeof(dir), "/proc/%d", pid);
	fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? (errno == ENOENT ? -ESRCH : -errno) : fd;
}

static int in_set(const unsigned long *set, int n, unsigned long inode)
{
	for (int i = 0; i < n; i++)
		if (set[i] == inode)
			return 1;
	return 0;
}

/* ---- from net/unix: without sock_diag ------------------------------------------ */

struct rows_ctx {
	const struct netunix_match *m;
	struct sock_owned *out;
	struct other_fds *others; /* NULL: not wanted */
};

static int held_row(void *ctx, int fddir, const char *name, int fd, const char *target)
{
	struct rows_ctx *o = ctx;
	unsigned long inode = fdscan_socket_inode(target);
	bool listening, connected;

	(void)fddir;
	(void)name;
	if (!inode)
		return 0;
	listening = in_set(o->m->listening, o->m->nlistening, inode);
	connected = in_set(o->m->connected, o->m->nconnected, inode);
	if (!o->out->listener && listening)
		o->out->listener = inode;
	if (connected && o->out->nconnected < NETUNIX_MAX_INODES)
		o->out->connected[o->out->nconnected++] = inode;
	/* Neither: a socket of another kind, path or network namespace. */
	if (!listening && !connected && o->others) {
		if (o->others->n < SOCKHELD_FDS_MAX)
			o->others->fd[o->others->n++] = (struct sockheld_fd){ .fd = fd, .ino = inode };
		else
			o->others->more = true;
	}
	return 0;
}

/* The rows on `path`, then which of them the process holds. */
static int owned_from_rows(int piddir, const char *path, struct sock_owned *out, struct other_fds *others)
{
	struct netunix_match *m = malloc(sizeof(*m));
	struct rows_ctx o = { .m = m, .out = out, .others = others };
	int err;

	if (!m)
		return -ENOMEM;
	err = netunix_find(piddir, path, m);
	if (!err && m->nlistening)
		err = fdscan(piddir, held_row, &o);
	free(m);
	return err;
}

/* ---- from the fds and sock_diag ------------------------------------------------ */

static int collect_fd(void *ctx, int fddir, const char *name, int fd, const char *target)
{
	struct other_fds *all = ctx;
	unsigned long inode = fdscan_socket_inode(target);

	(void)fddir;
	(void)name;
	if (!inode)
		return 0;
	if (all->n == SOCKHELD_FDS_MAX) {
		all->more = true;
		return 1; /* too many to look at one by one: the rows say */
	}
	all->fd[all->n++] = (struct sockheld_fd){ .fd = fd, .ino = inode };
	return 0;
}

static enum role role_on(const struct sockdiag_rec *r, const char *path)
{
	char text[SOCKDIAG_NAME_MAX + 2];

	if (sockdiag_name_text(r, text, sizeof(text)) || strcmp(text, path))
		return ROLE_OTHER;
	if (r->state == SOCKDIAG_LISTEN)
		return ROLE_LISTENER;
	return r->state == SOCKDIAG_ESTABLISHED ? ROLE_ACCEPTED : ROLE_OTHER;
}

/* One socket of the process's, placed by its role; kept in `all` when other. */
static bool place(struct sock_owned *out, const struct sockdiag_rec *r, enum role role)
{
	if (role == ROLE_LISTENER && !out->listener) {
		out->listener = r->ino;
		out->listener_rec = *r;
		out->listener_known = true;
	}
	if (role == ROLE_ACCEPTED && out->nconnected < NETUNIX_MAX_INODES)
		out->connected[out->nconnected++] = r->ino;
	return role == ROLE_OTHER;
}

/*
 * Each fd asked about: ENOENT is a socket not in the namespace, or no
 * unix_diag at all (it answers the same); told apart by an empty dump
 * when nothing was found. -EOPNOTSUPP: no sock_diag.
 */
static int owned_exact(int nl, const char *path, struct sock_owned *out, struct other_fds *all)
{
	int kept = 0, found = 0, err;

	for (int i = 0; i < all->n; i++) {
		struct sockdiag_rec rec;

		err = sockdiag_query_one(nl, (uint32_t)all->fd[i].ino, WHAT_SHOWN, &rec);
		if (err && err != -ENOENT)
			return err;
		found += !err;
		if (err || place(out, &rec, role_on(&rec, path)))
			all->fd[kept++] = all->fd[i];
	}
	all->n = kept;
	if (kept && !found) {
		err = sockdiag_query(nl, 0, 0, 0, NULL, NULL);
		if (err)
			return err == -ENOENT ? -EOPNOTSUPP : err;
	}
	return 0;
}

static int by_ino(const void *a, const void *b)
{
	unsigned long x = ((const struct sockheld_fd *)a)->ino, y = ((const struct sockheld_fd *)b)->ino;

	return x < y ? -1 : x > y;
}

struct dump_ctx {
	const char *path;
	struct sock_owned *out;
	struct other_fds *all; /* sorted by inode */
	unsigned char *placed; /* per entry of all: found and not other */
};

static void dumped(void *ctx, const struct sockdiag_rec *r)
{
	struct dump_ctx *d = ctx;
	struct sockheld_fd key = { .ino = r->ino };
	struct sockheld_fd *hit = bsearch(&key, d->all->fd, (size_t)d->all->n, sizeof(key), by_ino);

	/* One socket may sit at several fds: each is the same socket. */
	for (; hit && hit > d->all->fd && hit[-1].ino == r->ino; hit--)
		;
	if (hit && !place(d->out, r, role_on(r, d->path)))
		for (; hit < d->all->fd + d->all->n && hit->ino == r->ino; hit++)
			d->placed[hit - d->all->fd] = 1;
}

/* Many fds: one dump of the namespace, each of its sockets looked up among them. */
static int owned_dump(int nl, const char *path, struct sock_owned *out, struct other_fds *all)
{
	struct dump_ctx d = { .path = path, .out = out, .all = all };
	int kept = 0, err;

	d.placed = calloc((size_t)all->n, 1);
	if (!d.placed)
		return -ENOMEM;
	qsort(all->fd, (size_t)all->n, sizeof(all->fd[0]), by_ino);
	err = sockdiag_query(nl, 0, ~0U, WHAT_SHOWN, dumped, &d);
	for (int i = 0; !err && i < all->n; i++)
		if (!d.placed[i])
			all->fd[kept++] = all->fd[i];
	if (!err)
		all->n = kept;
	free(d.placed);
	return err;
}

/* The listener alone: among the namespace's listeners, dumped once for many targets. */
static int listener_from_fds(int pid, const char *path, struct sock_owned *out,
			     const struct other_fds *all)
{
	uint32_t *inos = malloc((size_t)all->n * sizeof(*inos));
	struct sockdiag_rec r;
	int rc = -ENOMEM;

	if (!inos)
		return rc;
	for (int i = 0; i < all->n; i++)
		inos[i] = (uint32_t)all->fd[i].ino;
	rc = sockdiag_find_listener(pid, inos, all->n, path, &r);
	free(inos);
	if (rc == 1)
		(void)place(out, &r, ROLE_LISTENER);
	return rc < 0 ? rc : 0;
}

/* -EOPNOTSUPP (or any failure of sock_diag): the rows are read instead. */
static int owned_from_fds(int pid, int piddir, const char *path, struct sock_owned *out,
			  struct other_fds *all, bool accepted_too)
{
	int nl, err;

	all->n = 0;
	all->more = false;
	err = fdscan(piddir, collect_fd, all);
	if (err < 0 || all->more)
		return err < 0 ? err : -E2BIG;
	if (all->n == 0)
		return 0;
	if (!accepted_too) {
		err = listener_from_fds(pid, path, out, all);
		if (err != -E2BIG)
			return err;
	}
	nl = sockdiag_socket_for(pid);
	if (nl < 0)
		return nl;
	err = all->n <= EXACT_FDS_MAX ? owned_exact(nl, path, out, all) : owned_dump(nl, path, out, all);
	if (err && err != -EOPNOTSUPP)
		sockdiag_socket_drop(nl);
	return err;
}

int sockstate_owned_scan(int pid, const char *path, struct sock_owned *out,
			 struct other_fds *others, bool accepted_too)
{
	struct other_fds *all = others ? others : malloc(sizeof(*all));
	int piddir, err = -ENOMEM;

	memset(out, 0, sizeof(*out));
	if (others) {
		others->n = 0;
		others->more = false;
	}
	if (!all)
		return -ENOMEM;
	piddir = sockstate_open_piddir(pid);
	err = piddir < 0 ? piddir : owned_from_fds(pid, piddir, path, out, all, accepted_too);
	if (err && err != -ESRCH && piddir >= 0) {
		memset(out, 0, sizeof(*out));
		if (others) {
			others->n = 0;
			others->more = false;
		}
		err = owned_from_rows(piddir, path, out, others);
	}
	if (piddir >= 0)
		close(piddir);
	if (all != others)
		free(all);
	return err;
}
