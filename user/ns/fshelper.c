// SPDX-License-Identifier: MIT
/* The per-target helper: starting it, asking it, ending it (see fshelper.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/thread.h"
#include "shared/clock.h"
#include "results/copytree.h"
#include "ns/fshelper.h"
#include "ns/fshelper_child.h"
#include "ns/fshelper_impl.h"
#include "ns/fshelper_wire.h"
#include "proc/procfs.h"

/* ---- talking ------------------------------------------------------------------ */

#define FSH_SLICE_MS 200

int fsh_send(struct fshelper *h, uint32_t op, uint64_t a, const void *p, size_t n)
{
	struct fsh_msg m = { .op = op, .a = a };
	struct iovec iov[2] = { { &m, sizeof(m) }, { (void *)p, n } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = n ? 2 : 1 };

	if (h->chan < 0)
		return -EPIPE;
	while (sendmsg(h->chan, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
		if (errno == EINTR)
			continue;
		fsh_kill(h);
		return -EPIPE;
	}
	return 0;
}

/*
 * The next message within FSHELPER_WAIT_MS: its payload in h->buf
 * (NUL-terminated, *plen bytes). A helper that says nothing in time, or
 * sends what is not a message, is killed.
 */
int fsh_recv(struct fshelper *h, struct fsh_msg *m, size_t *plen)
{
	struct pollfd p = { .fd = h->chan, .events = POLLIN };
	struct iovec iov[2] = { { m, sizeof(*m) }, { h->buf, FSH_PAYLOAD_MAX } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
	ssize_t n;
	int rc;

	if (h->chan < 0)
		return -EPIPE;
	/* In slices, so a SIGINT, SIGTERM or SIGHUP waiting is seen within one. */
	for (int waited = 0;; waited += FSH_SLICE_MS) {
		if (copytree_signal_pending()) {
			fsh_kill(h); /* mid-answer: what it still sends is of no use */
			return -EINTR;
		}
		if (waited >= FSHELPER_WAIT_MS) {
			fsh_kill(h);
			return -ETIMEDOUT;
		}
		/* The operation's own deadline, however its time went (a helper let run in drips). */
		if (h->deadline_ms && clock_ms() >= h->deadline_ms) {
			fsh_kill(h);
			return -ETIME;
		}
		rc = poll(&p, 1, FSH_SLICE_MS);
		if (rc > 0 || (rc < 0 && errno != EINTR))
			break;
	}
	if (rc < 0) {
		fsh_kill(h);
		return -EPIPE;
	}
	/* The header and the payload land apart: the payload where callers read it. */
	do
		n = recvmsg(h->chan, &mh, MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < (ssize_t)sizeof(*m) || (mh.msg_flags & MSG_TRUNC)) {
		fsh_kill(h);
		return -EPIPE;
	}
	*plen = (size_t)n - sizeof(*m);
	h->buf[*plen] = '\0';
	return 0;
}

/* Wait for DONE, dropping anything else (a cancelled stream's tail). */
int fsh_done(struct fshelper *h)
{
	struct fsh_msg m;
	size_t n;
	int rc;

	while ((rc = fsh_recv(h, &m, &n)) == 0)
		if (m.op == FSH_REP_DONE)
			return m.status > 0 ? -EIO : m.status;
	return rc;
}

void fsh_kill(struct fshelper *h)
{
	int status;

	if (h->chan >= 0)
		close(h->chan);
	h->chan = -1;
	if (h->pid > 0) {
		kill(h->pid, SIGKILL);
		while (waitpid(h->pid, &status, __WALL) < 0 && errno == EINTR)
			;
	}
	h->pid = -1;
}

void fshelper_set_deadline(struct fshelper *h, int64_t deadline_ms)
{
	if (h)
		h->deadline_ms = deadline_ms;
}

/* ---- starting ------------------------------------------------------------------ */

static int open_ns(int pid, const char *name, bool *ours)
{
	char path[64];
	struct stat mine, theirs;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/ns/%s", pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	snprintf(path, sizeof(path), "/proc/self/ns/%s", name);
	if (fstat(fd, &theirs) || stat(path, &mine)) {
		int err = -errno;

		close(fd);
		return err;
	}
	*ours = mine.st_dev == theirs.st_dev && mine.st_ino == theirs.st_ino;
	return fd;
}

static void close_setup(struct fsh_setup *s)
{
	int *fds[] = { &s->chan, &s->userns_fd, &s->mntns_fd, &s->root_fd, &s->null_fd };

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

/* Everything the child needs, opened here, with the target's ids as it numbers them. */
static int prepare(int pid, struct fsh_setup *s, char *why, size_t len)
{
	unsigned long long before, after;
	bool own_user = true, own_mnt = true;
	int err;

	if ((err = procfs_start_time(pid, &before)) || (err = procfs_read_creds(pid, &s->creds)))
		return snprintf(why, len, "cannot read /proc/%d: %s", pid, strerror(-err)), err;
	s->userns_fd = open_ns(pid, "user", &own_user);
	s->mntns_fd = open_ns(pid, "mnt", &own_mnt);
	s->root_fd = procfs_open_root(pid);
	s->null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	err = s->userns_fd < 0 ? s->userns_fd :
	      s->mntns_fd < 0  ? s->mntns_fd :
	      s->root_fd < 0   ? s->root_fd :
	      s->null_fd < 0   ? -errno :
				 0;
	if (err)
		return snprintf(why, len, "cannot open the namespaces of pid %d: %s", pid,
				strerror(-err)),
		       err;
	if (own_user) {
		close(s->userns_fd);
		s->userns_fd = -1;
	} else if ((err = procfs_inner_creds(pid, &s->creds))) {
		return snprintf(why, len, "uid %u of pid %d has no number in its user namespace",
				(unsigned)s->creds.uid, pid),
		       err;
	}
	if (own_mnt) {
		close(s->mntns_fd);
		s->mntns_fd = -1;
	}
	/* All of it belongs to the process looked at first, not to a reused pid. */
	if (procfs_start_time(pid, &after) || after != before)
		return snprintf(why, len, "process %d has exited", pid), -ESRCH;
	return 0;
}

static int wait_ready(struct fshelper *h, char *why, size_t len)
{
	struct fsh_msg m;
	size_t n;
	int rc = fsh_recv(h, &m, &n);

	if (rc == 0 && m.op != FSH_REP_READY)
		rc = -EPROTO;
	else if (rc == 0)
		rc = m.status > 0 ? -EIO : m.status;
	if (rc)
		snprintf(why, len, "its helper could not take its rights: %s", strerror(-rc));
	return rc;
}

/*
 * Every helper is cloned by one thread that lives as long as dynprof: the
 * helper dies with the thread that made it (PR_SET_PDEATHSIG follows the
 * creating thread, not the process), and a join asks for its helper on a
 * thread beside the loop that ends with the join. A caller on any thread
 * hands its setup over and waits only for the clone itself.
 */
static struct {
	pthread_mutex_t turn; /* one request at a time */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool started;
	const struct fsh_setup *setup; /* the request; NULL: none */
	int parent;
	pid_t child; /* its answer, once done */
	int err;
	bool done;
} spawner = { .turn = PTHREAD_MUTEX_INITIALIZER,
	      .lock = PTHREAD_MUTEX_INITIALIZER,
	      .cond = PTHREAD_COND_INITIALIZER };

static void *spawner_main(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "dynprof-spawn");
	pthread_mutex_lock(&spawner.lock);
	for (;;) {
		while (!spawner.setup)
			pthread_cond_wait(&spawner.cond, &spawner.lock);
		/*
		 * No exit signal (a SIGCHLD would reach the user's signal rules
		 * and launch mode's wait); the child runs syscalls only, so
		 * skipping fork()'s atfork handlers is safe.
		 */
		spawner.child = (pid_t)syscall(SYS_clone, 0UL, NULL, NULL, NULL, NULL);
		if (spawner.child == 0)
			fshelper_child_main(spawner.setup, spawner.parent);
		spawner.err = spawner.child < 0 ? errno : 0;
		spawner.setup = NULL;
		spawner.done = true;
		pthread_cond_broadcast(&spawner.cond);
	}
	return NULL;
}

/* The child's pid, or a negative errno. */
static pid_t spawn(const struct fsh_setup *s, int parent)
{
	pid_t child;
	int rc = 0;

	pthread_mutex_lock(&spawner.turn);
	pthread_mutex_lock(&spawner.lock);
	if (!spawner.started) {
		pthread_t th;
		pthread_attr_t a;

		pthread_attr_init(&a);
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		rc = -thread_start(&th, &a, spawner_main, NULL);
		pthread_attr_destroy(&a);
		spawner.started = rc == 0;
	}
	if (rc == 0) {
		spawner.setup = s;
		spawner.parent = parent;
		spawner.done = false;
		pthread_cond_broadcast(&spawner.cond);
		while (!spawner.done)
			pthread_cond_wait(&spawner.cond, &spawner.lock);
		rc = spawner.err ? -spawner.err : 0;
	}
	child = rc ? rc : spawner.child;
	pthread_mutex_unlock(&spawner.lock);
	pthread_mutex_unlock(&spawner.turn);
	return child;
}

int fshelper_start(int pid, struct fshelper **out, char *why, size_t len)
{
	struct fsh_setup s = { .chan = -1, .userns_fd = -1, .mntns_fd = -1, .root_fd = -1, .null_fd = -1 };
	struct fshelper *h = calloc(1, sizeof(*h));
	int chan[2], rc, parent = (int)getpid();
	pid_t child;

	*out = NULL;
	if (!h || !(h->buf = malloc(FSH_PAYLOAD_MAX + 1))) {
		free(h);
		return snprintf(why, len, "out of memory"), -ENOMEM;
	}
	h->chan = h->pid = -1;
	rc = prepare(pid, &s, why, len);
	if (rc == 0 && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, chan))
		rc = -errno;
	if (rc) {
		close_setup(&s);
		fshelper_stop(h);
		return rc;
	}
	s.chan = chan[1];
	child = spawn(&s, parent);
	rc = child < 0 ? child : 0;
	close_setup(&s);
	h->chan = chan[0];
	h->pid = child;
	if (rc == 0)
		rc = wait_ready(h, why, len);
	else
		snprintf(why, len, "cannot start its helper: %s", strerror(-rc));
	if (rc) {
		fshelper_stop(h);
		return rc;
	}
	*out = h;
	return 0;
}

void fshelper_stop(struct fshelper *h)
{
	if (!h)
		return;
	fsh_kill(h);
	free(h->buf);
	free(h);
}

int fshelper_pid(const struct fshelper *h)
{
	return h ? h->pid : -1;
}

/* ---- small requests -------------------------------------------------------------- */

int fshelper_read(struct fshelper *h, const char *path, size_t max, char **buf, size_t *len)
{
	struct fsh_msg m;
	size_t n, used = 0;
	char *out = malloc(max + 1);
	int rc = out ? fsh_send(h, FSH_REQ_READ, max, path, strlen(path) + 1) : -ENOMEM;

	while (rc == 0 && (rc = fsh_recv(h, &m, &n)) == 0 && m.op == FSH_REP_DATA) {
		/* The helper is the target's: its offsets and sizes are checked, not believed. */
		if (m.a != used || n > max - used) {
			fsh_kill(h);
			rc = -EPROTO;
			break;
		}
		memcpy(out + used, h->buf, n);
		used += n;
	}
	if (rc == 0)
		rc = m.op == FSH_REP_DONE ? (m.status > 0 ? -EIO : m.status) : -EPROTO;
	if (rc) {
		free(out);
		return rc;
	}
	out[used] = '\0';
	*buf = out;
	*len = used;
	return 0;
}

int fshelper_result_dir(struct fshelper *h, const char *home, const char *sub1, const char *sub2)
{
	size_t a = strlen(home) + 1, b = strlen(sub1) + 1, c = strlen(sub2) + 1;
	char *p;
	int rc;

	if (a + b + c > FSH_PAYLOAD_MAX)
		return -ENAMETOOLONG;
	p = malloc(a + b + c);
	if (!p)
		return -ENOMEM;
	memcpy(p, home, a);
	memcpy(p + a, sub1, b);
	memcpy(p + a + b, sub2, c);
	rc = fsh_send(h, FSH_REQ_RESULT_DIR, 0, p, a + b + c);
	free(p);
	return rc ? rc : fsh_done(h);
}

int fshelper_list(struct fshelper *h, void (*each)(void *ctx, const char *name, int kind), void *ctx)
{
	struct fsh_msg m;
	size_t n;
	int rc = fsh_send(h, FSH_REQ_LIST, 0, NULL, 0);

	while (rc == 0 && (rc = fsh_recv(h, &m, &n)) == 0 && m.op == FSH_REP_ENTRY)
		/* A name: one NUL-terminated component, as a folder holds it. */
		if (n >= 2 && memchr(h->buf, '\0', n) == h->buf + n - 1 && !strchr(h->buf, '/'))
			each(ctx, h->buf, (int)m.a);
	if (rc == 0)
		rc = m.op == FSH_REP_DONE ? (m.status > 0 ? -EIO : m.status) : -EPROTO;
	return rc;
}

int fshelper_remove(struct fshelper *h, const char *name)
{
	int rc = fsh_send(h, FSH_REQ_REMOVE, 0, name, strlen(name) + 1);

	return rc ? rc : fsh_done(h);
}

int fshelper_drop_result_dir(struct fshelper *h)
{
	int rc = fsh_send(h, FSH_REQ_DROP_RESULT_DIR, 0, NULL, 0);

	return rc ? rc : fsh_done(h);
}
