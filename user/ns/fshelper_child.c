// SPDX-License-Identifier: MIT
/*
 * The per-target helper's own side (see fshelper.h): set-up in the
 * target's namespaces and rights, then one request at a time.
 *
 * It is a child made by a raw clone() of a process that has threads, so it
 * uses syscalls only: no malloc, no stdio, no readdir (getdents64 into
 * buffers on the stack). Everything it reads is the target's and is only
 * passed on as data; dynprof checks what it receives.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include <grp.h>

#include "common/fsident.h"
#include "ns/fshelper_child.h"
#include "ns/fshelper_wire.h"

#define CHAN 3 /* where the set-up puts the channel */

static char msgbuf[FSH_MSG_MAX + 1]; /* the request being served */

/* ---- sending ---------------------------------------------------------------- */

static int send_msg(uint32_t op, int32_t status, uint64_t a, uint64_t b, const void *p, size_t n)
{
	struct fsh_msg m = { .op = op, .status = status, .a = a, .b = b };
	struct iovec iov[2] = { { &m, sizeof(m) }, { (void *)p, n } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = n ? 2 : 1 };

	while (sendmsg(CHAN, &mh, MSG_NOSIGNAL) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

static int send_done(int status)
{
	return send_msg(FSH_REP_DONE, status, 0, 0, NULL, 0);
}

/*
 * dynprof asked to stop the stream (CANCEL), or is gone: looked at between
 * records, never waited for.
 */
static bool cancelled(void)
{
	struct pollfd p = { .fd = CHAN, .events = POLLIN };
	struct fsh_msg m;

	if (poll(&p, 1, 0) <= 0)
		return false;
	if (p.revents & (POLLHUP | POLLERR))
		_exit(0);
	if (recv(CHAN, &m, sizeof(m), MSG_DONTWAIT) <= 0)
		_exit(0);
	return m.op == FSH_REQ_CANCEL;
}

/* ---- looking at entries ------------------------------------------------------ */

/* The fd opened is the entry looked at (not swapped in between). */
static bool opened_is(int fd, const struct fs_ident *want)
{
	struct fs_ident now;

	return fs_ident_at(fd, "", AT_EMPTY_PATH, &now) == 0 && now.dev == want->dev &&
	       now.ino == want->ino && (now.mode & S_IFMT) == (want->mode & S_IFMT);
}

static int kind_of(mode_t mode)
{
	return S_ISDIR(mode) ? FSH_KIND_DIR :
	       S_ISREG(mode) ? FSH_KIND_FILE :
	       S_ISLNK(mode) ? FSH_KIND_SYMLINK :
			       FSH_KIND_OTHER;
}

/* ---- folders by getdents64 ---------------------------------------------------- */

struct dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

struct dirwalk {
	int fd;
	char buf[8192] __attribute__((aligned(8))); /* dirent64 records hold u64s */
	long n, at;
};

static void walk_begin(struct dirwalk *w, int fd)
{
	w->fd = fd;
	w->n = w->at = 0;
	lseek(fd, 0, SEEK_SET);
}

/* The next name other than . and ..; NULL at the end (or on an error: *err). */
static const char *walk_next(struct dirwalk *w, int *err)
{
	for (;;) {
		struct dirent64 *d;

		if (w->at >= w->n) {
			w->n = syscall(SYS_getdents64, w->fd, w->buf, sizeof(w->buf));
			w->at = 0;
			if (w->n <= 0) {
				*err = w->n < 0 ? -errno : 0;
				return NULL;
			}
		}
		d = (struct dirent64 *)(w->buf + w->at);
		w->at += d->d_reclen;
		if (strcmp(d->d_name, ".") && strcmp(d->d_name, ".."))
			return d->d_name;
	}
}

/* ---- READ ---------------------------------------------------------------------- */

static int send_extent(int fd, off_t from, off_t to)
{
	char buf[FSH_PAYLOAD_MAX];

	while (from < to) {
		size_t want = (size_t)(to - from) < sizeof(buf) ? (size_t)(to - from) : sizeof(buf);
		ssize_t n = pread(fd, buf, want, from);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 1; /* shorter than it was: the rest is not sent */
		if (cancelled())
			return -ECANCELED;
		if (send_msg(FSH_REP_DATA, 0, (uint64_t)from, 0, buf, (size_t)n))
			_exit(0);
		from += n;
	}
	return 0;
}

/* The data of a regular file up to size, its holes skipped (SEEK_DATA). */
static int send_data(int fd, off_t size)
{
	off_t at = 0;

	while (at < size) {
		off_t data = lseek(fd, at, SEEK_DATA), hole;
		int rc;

		if (data < 0 && errno == ENXIO)
			return 0; /* a hole to the end */
		if (data < 0)
			return send_extent(fd, at, size) < 0 ? -errno : 0;
		if (data >= size)
			return 0;
		hole = lseek(fd, data, SEEK_HOLE);
		if (hole < 0 || hole > size)
			hole = size;
		rc = send_extent(fd, data, hole);
		if (rc)
			return rc < 0 ? rc : 0;
		at = hole;
	}
	return 0;
}

static void serve_read(const char *path, uint64_t max)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC), rc;
	struct fs_ident id;

	if (fd < 0) {
		send_done(-errno);
		return;
	}
	rc = fs_ident_at(fd, "", AT_EMPTY_PATH, &id);
	if (rc == 0 && !S_ISREG(id.mode))
		rc = -EMEDIUMTYPE;
	else if (rc == 0 && (uint64_t)id.size > max)
		rc = -EFBIG;
	if (rc == 0)
		rc = send_extent(fd, 0, id.size);
	close(fd);
	send_done(rc < 0 ? rc : 0);
}

/* ---- RESULT_DIR ----------------------------------------------------------------- */

static int result_fd = -1;
static char result_names[2][256]; /* sub1, sub2 of the held folder */

/*
 * mkdir name in parent (if missing) and open it: a folder of ours, on
 * parent's mount. -ENOTDIR a symlink or file there, -EXDEV a mount,
 * -EPERM someone else's.
 */
static int own_dir(int parent, const char *name)
{
	struct fs_ident p, d;
	struct stat st;
	int fd, err = 0;

	if (mkdirat(parent, name, 0750) && errno != EEXIST)
		return -errno;
	fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ELOOP ? -ENOTDIR : -errno;
	if (fs_ident_at(parent, "", AT_EMPTY_PATH, &p) || fs_ident_at(fd, "", AT_EMPTY_PATH, &d) ||
	    fstat(fd, &st))
		err = -EIO;
	else if (!fs_ident_same_mount(&p, &d))
		err = -EXDEV;
	else if (st.st_uid != geteuid())
		err = -EPERM;
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/* Names are at most 255 bytes (NAME_MAX); copied without stdio. */
static void keep_names(const char *a, const char *b)
{
	size_t na = strnlen(a, 255), nb = strnlen(b, 255);

	memcpy(result_names[0], a, na);
	result_names[0][na] = '\0';
	memcpy(result_names[1], b, nb);
	result_names[1][nb] = '\0';
}

static bool plain_name(const char *s)
{
	return s[0] && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, "..");
}

static void serve_result_dir(const char *p, size_t n)
{
	const char *home = p, *sub1, *sub2;
	int h, d1, d2;

	sub1 = memchr(home, '\0', n);
	sub2 = sub1 ? memchr(sub1 + 1, '\0', n - (size_t)(sub1 + 1 - p)) : NULL;
	if (!sub2 || !plain_name(sub1 + 1) || !plain_name(sub2 + 1)) {
		send_done(-EINVAL);
		return;
	}
	/* The home is the target's: reached as it reaches it (its own links followed). */
	h = open(home, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d1 = h < 0 ? -errno : own_dir(h, sub1 + 1);
	d2 = d1 < 0 ? d1 : own_dir(d1, sub2 + 1);
	if (h >= 0)
		close(h);
	if (d1 >= 0)
		close(d1);
	if (d2 >= 0) {
		if (result_fd >= 0)
			close(result_fd);
		result_fd = d2;
		keep_names(sub1 + 1, sub2 + 1);
	}
	send_done(d2 < 0 ? d2 : 0);
}

/* The held folder, then .dynprof, each only when empty (rmdir removes nothing else). */
static void serve_drop(void)
{
	int parent, grand, rc = 0;

	if (result_fd < 0) {
		send_done(-EBADF);
		return;
	}
	parent = openat(result_fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (parent < 0) {
		send_done(-errno);
		return;
	}
	if (unlinkat(parent, result_names[1], AT_REMOVEDIR))
		rc = -errno;
	grand = rc ? -1 : openat(parent, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (grand >= 0) {
		unlinkat(grand, result_names[0], AT_REMOVEDIR); /* others' runs may have theirs there */
		close(grand);
	}
	close(parent);
	close(result_fd);
	result_fd = -1;
	send_done(rc);
}

/* ---- LIST ------------------------------------------------------------------------ */

static void serve_list(void)
{
	struct dirwalk w;
	const char *name;
	int err = 0;

	if (result_fd < 0) {
		send_done(-EBADF);
		return;
	}
	walk_begin(&w, result_fd);
	while ((name = walk_next(&w, &err))) {
		struct fs_ident id;

		if (fs_ident_at(result_fd, name, 0, &id))
			continue; /* gone since */
		if (send_msg(FSH_REP_ENTRY, 0, (uint64_t)kind_of(id.mode), 0, name, strlen(name) + 1))
			_exit(0);
	}
	send_done(err);
}

/* ---- COPY ------------------------------------------------------------------------- */

struct copy {
	struct fs_ident root;
	char rel[4096];
};

static int skip(const char *rel, int kind, int err)
{
	return send_msg(FSH_REP_SKIP, err, (uint64_t)kind, 0, rel, strlen(rel) + 1) ? -EPIPE : 0;
}

static int copy_dir(struct copy *c, int dirfd, size_t rlen, int depth);

static int copy_file(struct copy *c, int dirfd, const char *name, const struct fs_ident *id)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC), rc;

	if (fd < 0)
		return errno == ENOENT ? 0 : skip(c->rel, FSH_KIND_FILE, -errno);
	if (!opened_is(fd, id)) {
		close(fd);
		return skip(c->rel, FSH_KIND_OTHER, -ESTALE);
	}
	if (send_msg(FSH_REP_FILE, 0, id->mode & 07777, (uint64_t)id->size, c->rel, strlen(c->rel) + 1)) {
		close(fd);
		return -EPIPE;
	}
	rc = send_data(fd, id->size);
	close(fd);
	return rc;
}

static int copy_entry(struct copy *c, int dirfd, const char *name, size_t rlen, int depth)
{
	size_t nlen = strlen(name);
	struct fs_ident id;
	int rc, fd;

	if (rlen + 1 + nlen + 1 > sizeof(c->rel))
		return skip(c->rel, FSH_KIND_OTHER, -ENAMETOOLONG);
	c->rel[rlen] = rlen ? '/' : '\0';
	memcpy(c->rel + rlen + !!rlen, name, nlen + 1);
	if (fs_ident_at(dirfd, name, 0, &id))
		return 0; /* gone since it was listed */
	if (!S_ISDIR(id.mode) && !S_ISREG(id.mode))
		return skip(c->rel, kind_of(id.mode), 0);
	if (!fs_ident_same_mount(&c->root, &id))
		return skip(c->rel, FSH_KIND_MOUNT, -EXDEV);
	if (S_ISREG(id.mode))
		return copy_file(c, dirfd, name, &id);
	if (depth + 1 > FSH_MAX_DEPTH)
		return skip(c->rel, FSH_KIND_DIR, -ELOOP);
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : skip(c->rel, FSH_KIND_DIR, -errno);
	if (!opened_is(fd, &id)) {
		close(fd);
		return skip(c->rel, FSH_KIND_OTHER, -ESTALE);
	}
	rc = send_msg(FSH_REP_DIR, 0, id.mode & 07777, 0, c->rel, strlen(c->rel) + 1) ?
		     -EPIPE :
		     copy_dir(c, fd, strlen(c->rel), depth + 1);
	close(fd);
	return rc;
}

static int copy_dir(struct copy *c, int dirfd, size_t rlen, int depth)
{
	struct dirwalk w;
	const char *name;
	int err = 0, rc = 0;

	walk_begin(&w, dirfd);
	while (rc == 0 && (name = walk_next(&w, &err))) {
		if (cancelled())
			return -ECANCELED;
		rc = copy_entry(c, dirfd, name, rlen, depth);
		c->rel[rlen] = '\0';
	}
	return rc ? rc : err;
}

static struct copy copying;

static int open_held(const char *name, struct fs_ident *id)
{
	int fd;

	if (result_fd < 0)
		return -EBADF;
	if (!plain_name(name))
		return -EINVAL;
	fd = openat(result_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ELOOP ? -ENOTDIR : -errno;
	if (fs_ident_at(fd, "", AT_EMPTY_PATH, id)) {
		close(fd);
		return -EIO;
	}
	return fd;
}

static void serve_copy(const char *name)
{
	int fd = open_held(name, &copying.root), rc;

	if (fd < 0) {
		send_done(fd);
		return;
	}
	copying.rel[0] = '\0';
	rc = copy_dir(&copying, fd, 0, 0);
	close(fd);
	send_done(rc);
}

/* ---- REMOVE ------------------------------------------------------------------------ */

static int remove_tree(const struct fs_ident *root, int parent, const char *name, int depth);

/* One pass over dirfd: *removed counts what went, *left what stays (other mounts). */
static int remove_pass(const struct fs_ident *root, int dirfd, int depth, int *removed, int *left)
{
	struct dirwalk w;
	const char *name;
	int err = 0, rc = 0;

	*removed = *left = 0;
	walk_begin(&w, dirfd);
	while (rc == 0 && (name = walk_next(&w, &err))) {
		struct fs_ident id;

		if (fs_ident_at(dirfd, name, 0, &id))
			continue;
		if (!fs_ident_same_mount(root, &id)) {
			++*left;
			continue;
		}
		if (S_ISDIR(id.mode))
			rc = remove_tree(root, dirfd, name, depth + 1);
		else if (unlinkat(dirfd, name, 0) && errno != ENOENT)
			rc = -errno;
		if (rc == 1) {
			++*left;
			rc = 0;
		} else {
			*removed += rc == 0;
		}
	}
	return rc ? rc : err;
}

/* 0 removed, 1 left with what is on other mounts, or a negative errno. */
static int remove_tree(const struct fs_ident *root, int parent, const char *name, int depth)
{
	int fd, rc = 0, removed = 1, left = 0;

	if (depth > FSH_MAX_DEPTH)
		return 1;
	fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	/* Removing while reading may make getdents skip names (tmpfs): passes until none goes. */
	for (int pass = 0; rc == 0 && removed && pass < 64; pass++)
		rc = remove_pass(root, fd, depth, &removed, &left);
	close(fd);
	if (rc)
		return rc;
	if (unlinkat(parent, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
		return 0;
	return left && (errno == ENOTEMPTY || errno == EEXIST || errno == EBUSY) ? 1 : -errno;
}

static void serve_remove(const char *name)
{
	struct fs_ident root;
	int fd = open_held(name, &root), rc;

	if (fd < 0) {
		send_done(fd);
		return;
	}
	close(fd);
	rc = remove_tree(&root, result_fd, name, 0);
	send_done(rc < 0 ? rc : 0);
}

/* ---- set-up ------------------------------------------------------------------------- */

/* Only the channel and the namespace fds, at 3..6; 0-2 on /dev/null. */
static int keep_only(const struct fsh_setup *s)
{
	int keep[5] = { s->chan, s->userns_fd, s->mntns_fd, s->root_fd, s->null_fd };
	int copy[5];

	for (int i = 0; i < 5; i++) {
		copy[i] = keep[i] < 0 ? -1 : fcntl(keep[i], F_DUPFD, 10);
		if (keep[i] >= 0 && copy[i] < 0)
			return -errno;
	}
	for (int i = 0; i < 3; i++)
		if (dup2(copy[4], i) < 0)
			return -errno;
	for (int i = 0; i < 4; i++)
		if (copy[i] >= 0 && dup2(copy[i], 3 + i) < 0)
			return -errno;
		else if (copy[i] < 0)
			close(3 + i);
	if (syscall(SYS_close_range, 7U, ~0U, 0U) && errno == ENOSYS)
		for (int fd = 7; fd < 65536; fd++)
			close(fd);
	return 0;
}

static int drop_caps(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

/* Become the target: its namespaces, its root, its ids, no capabilities. */
static int become(const struct fsh_setup *s, int parent)
{
	const struct proc_creds *c = &s->creds;

	/* Our own groups (root's) go first, while we may drop them. */
	if (syscall(SYS_setgroups, 0, NULL) && errno != EPERM)
		return -errno;
	/*
	 * The mount namespace first while we may: its owner can be an ancestor
	 * of the target's user namespace (a user namespace made inside the one
	 * that made the mounts), which we no longer reach once inside the
	 * target's. A dynprof without rights over it (not root) joins the user
	 * namespace first, which gives them for its own mounts.
	 */
	bool mnt_joined = s->mntns_fd >= 0 && setns(5, CLONE_NEWNS) == 0;

	if (s->userns_fd >= 0 && setns(4, CLONE_NEWUSER))
		return -errno;
	if (s->mntns_fd >= 0 && !mnt_joined && setns(5, CLONE_NEWNS))
		return -errno;
	if (fchdir(6) || chroot(".") || chdir("/"))
		return -errno;
	close(4);
	close(5);
	close(6);
	/*
	 * The raw system calls, this task's ids only. glibc's wrappers set the
	 * ids of every thread it knows of, and the thread list we were cloned
	 * with is our parent's: one being created at that moment never starts
	 * here, and the wrapper waited for it forever (a helper left alive,
	 * all signals blocked, after its dynprof was gone).
	 */
	/* A namespace that denies setgroups: no groups at all (fewer rights, never more). */
	if (c->ngroups && syscall(SYS_setgroups, (size_t)c->ngroups, c->groups) && errno != EPERM)
		return -errno;
	if (syscall(SYS_setresgid, c->gid, c->gid, c->gid) ||
	    syscall(SYS_setresuid, c->uid, c->uid, c->uid))
		return -errno;
	if (drop_caps())
		return -errno;
	/* Not dumpable: the target's user may not ptrace us. Die with dynprof. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) || prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0))
		return -errno;
	if (getppid() != parent)
		_exit(0);
	return 0;
}

static __attribute__((noreturn)) void serve(void)
{
	struct fsh_msg *m = (struct fsh_msg *)msgbuf;

	for (;;) {
		ssize_t n = recv(CHAN, msgbuf, FSH_MSG_MAX, 0);
		char *p = msgbuf + sizeof(*m);
		size_t plen;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < (ssize_t)sizeof(*m))
			_exit(0);
		plen = (size_t)n - sizeof(*m);
		p[plen] = '\0';
		switch (m->op) {
		case FSH_REQ_READ:
			serve_read(p, m->a);
			break;
		case FSH_REQ_RESULT_DIR:
			serve_result_dir(p, plen);
			break;
		case FSH_REQ_LIST:
			serve_list();
			break;
		case FSH_REQ_COPY:
			serve_copy(p);
			break;
		case FSH_REQ_REMOVE:
			serve_remove(p);
			break;
		case FSH_REQ_DROP_RESULT_DIR:
			serve_drop();
			break;
		case FSH_REQ_CANCEL:
			break; /* arrived after the stream ended */
		default:
			send_done(-EINVAL);
		}
	}
}

void fshelper_child_main(const struct fsh_setup *s, int parent)
{
	int rc;

	/* Its own name in ps (it was cloned by the "dynprof-spawn" thread, whose name it has). */
	prctl(PR_SET_NAME, "dynprof-fsh", 0, 0, 0);
	/* Dies with dynprof from the start (set again once its ids changed: that clears it). */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) || getppid() != parent)
		_exit(0);
	rc = keep_only(s);

	if (rc == 0)
		rc = become(s, parent);
	if (send_msg(FSH_REP_READY, rc, 0, 0, NULL, 0) || rc)
		_exit(0);
	serve();
}
