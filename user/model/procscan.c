// SPDX-License-Identifier: MIT
/* Reading one process from /proc (see procscan.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/rootfile.h"
#include "model/cgowner.h"
#include "model/conmon.h"
#include "model/container.h"
#include "proc/fdscan.h"
#include "proc/procfs.h"
#include "model/procscan.h"
#include "model/containername.h"
#include "model/engine_conf.h"
#include "shared/decimal.h"

#define STAT_MAX 4096           /* one line; comm is at most 16 bytes */
#define STATUS_MAX (256 * 1024) /* grows with Groups:, rarely past 4 KiB */
#define CGROUP_MAX (64 * 1024)  /* a dozen v1 hierarchies with deep k8s paths */

/* ---- pure helpers ---------------------------------------------------------- */

/* Parse a decimal int filling [s, end) after blanks. */
static int parse_int(const char **p, const char *end, int *out)
{
	const char *s = *p;
	uint64_t v;
	size_t n;

	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	if (decimal_prefix(s, (size_t)(end - s), INT_MAX, &v, &n))
		return -EINVAL;
	s += n;
	if (s < end && *s != ' ' && *s != '\t')
		return -EINVAL;
	*p = s;
	*out = (int)v;
	return 0;
}

/* The NSpid list [v, end): host first; the middle dropped beyond max. */
static int parse_chain(const char *v, const char *end, int *nspid, int max, int *nslevels)
{
	int n = 0, x;

	while (v < end) {
		while (v < end && (*v == ' ' || *v == '\t'))
			v++;
		if (v == end)
			break;
		if (parse_int(&v, end, &x))
			return -EINVAL;
		if (n < max)
			nspid[n++] = x;
		else
			nspid[max - 1] = x; /* the innermost so far stays last */
	}
	if (n == 0)
		return -EINVAL;
	*nslevels = n;
	return 0;
}

int procscan_parse_status(const char *text, int *ppid, int *nspid, int max, int *nslevels)
{
	const char *line = text;
	int have_ppid = 0, have_chain = 0, pid = -1;

	if (max < 1)
		return -EINVAL;
	while (*line) {
		const char *eol = strchr(line, '\n');
		const char *end = eol ? eol : line + strlen(line), *v;

		if (!strncmp(line, "PPid:", 5)) {
			v = line + 5;
			have_ppid = !parse_int(&v, end, ppid);
		} else if (!strncmp(line, "NSpid:", 6)) {
			have_chain = !parse_chain(line + 6, end, nspid, max, nslevels);
		} else if (!strncmp(line, "Pid:", 4)) {
			v = line + 4;
			if (parse_int(&v, end, &pid))
				pid = -1;
		}
		line = eol ? eol + 1 : end;
	}
	if (!have_chain && pid > 0) {
		nspid[0] = pid;
		*nslevels = 1;
		have_chain = 1;
	}
	return have_ppid && have_chain ? 0 : -EINVAL;
}

int procscan_parse_comm(const char *stat_text, char *out, size_t len)
{
	const char *open = strchr(stat_text, '('), *close = strrchr(stat_text, ')');

	if (!open || !close || close < open || len == 0)
		return -EINVAL;
	snprintf(out, len, "%.*s", (int)(close - open - 1), open + 1);
	return 0;
}

void procscan_join_args(const char *buf, size_t len, char *out, size_t outlen)
{
	size_t o = 0;

	if (outlen == 0)
		return;
	while (len > 0 && buf[len - 1] == '\0')
		len--;
	for (size_t i = 0; i < len && o + 1 < outlen; i++) {
		unsigned char c = (unsigned char)buf[i];

		out[o++] = c == '\0' ? ' ' : (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	out[o] = '\0';
}

unsigned long long procscan_ns_to_ticks(unsigned long long ns, long hz)
{
	if (hz <= 0)
		return 0;
	return ns / (1000000000ULL / (unsigned long long)hz);
}

/* ---- reading ---------------------------------------------------------------- */

static int open_piddir(int pid)
{
	char path[32];
	int fd;

	if (pid <= 0)
		return -ESRCH;
	snprintf(path, sizeof(path), "/proc/%d", pid);
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	return fd;
}

/*
 * A /proc text file, read whole: one read() into the caller's buffer is
 * the common case (these files are generated in one go, so a read that
 * does not fill the buffer has reached the end); a file that fills it
 * continues into the heap, up to `max` bytes. `*text` is `buf` or a heap
 * copy: release it with release_text().
 */
struct text_buf {
	char *text;
	size_t len;
	char *heap;
};

static int read_rest(int fd, const char *head, size_t used, size_t max, struct text_buf *t)
{
	char *rest;
	size_t rlen;
	int err = rootfile_read(fd, max - used, &rest, &rlen);

	if (err)
		return err;
	t->heap = malloc(used + rlen + 1);
	if (!t->heap) {
		free(rest);
		return -ENOMEM;
	}
	memcpy(t->heap, head, used);
	memcpy(t->heap + used, rest, rlen + 1);
	free(rest);
	t->text = t->heap;
	t->len = used + rlen;
	return 0;
}

static int read_text(int piddir, const char *name, char *buf, size_t size, size_t max, struct text_buf *t)
{
	int err = 0, fd = openat(piddir, name, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	t->heap = NULL;
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	do
		n = read(fd, buf, size - 1);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		err = errno == ENOENT ? -ESRCH : -errno;
	} else {
		buf[n] = '\0';
		t->text = buf;
		t->len = (size_t)n;
		if ((size_t)n == size - 1)
			err = read_rest(fd, buf, (size_t)n, max, t);
	}
	close(fd);
	return err;
}

static void release_text(struct text_buf *t)
{
	free(t->heap);
}

/* Up to len bytes of `name`, one read: a cut is fine (cmdline). Returns bytes. */
static ssize_t read_head(int piddir, const char *name, char *out, size_t len)
{
	int fd = openat(piddir, name, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	do
		n = read(fd, out, len);
	while (n < 0 && errno == EINTR);
	close(fd);
	return n;
}

/* stat: start time, comm; a zombie reads as gone (it holds no fds, no socket). */
static int read_stat(int piddir, struct pm_proc *p)
{
	char buf[1024], state = 0;
	struct text_buf t;
	int err = read_text(piddir, "stat", buf, sizeof(buf), STAT_MAX, &t);

	if (err)
		return err;
	err = procfs_parse_stat(t.text, &state, &p->start_time);
	if (!err)
		err = procscan_parse_comm(t.text, p->comm, sizeof(p->comm));
	release_text(&t);
	if (!err && (state == 'Z' || state == 'X' || state == 'x'))
		err = -ESRCH;
	return err;
}

static int read_status(int piddir, struct pm_proc *p)
{
	char buf[4096];
	struct text_buf t;
	int inner, err = read_text(piddir, "status", buf, sizeof(buf), STATUS_MAX, &t);

	if (err)
		return err;
	err = procfs_parse_status(t.text, &p->uid, &inner);
	if (!err)
		err = procscan_parse_status(t.text, &p->ppid, p->nspid, PM_MAX_NS, &p->nslevels);
	release_text(&t);
	return err;
}

static void read_cmdline(int piddir, struct pm_proc *p)
{
	char raw[sizeof(p->cmdline) - 1];
	ssize_t n = read_head(piddir, "cmdline", raw, sizeof(raw));

	procscan_join_args(raw, n > 0 ? (size_t)n : 0, p->cmdline, sizeof(p->cmdline));
}

static void read_exe(int piddir, char *out, size_t len)
{
	ssize_t n = readlinkat(piddir, "exe", out, len - 1);

	out[n > 0 ? n : 0] = '\0';
}

/* How deep dynprof's own pid namespace is (1 on the host), read once. */
static int own_pid_levels(void)
{
	static int levels;
	struct pm_proc self;
	int piddir;

	if (levels)
		return levels;
	levels = 1;
	piddir = open_piddir(getpid());
	if (piddir >= 0 && read_status(piddir, &self) == 0)
		levels = self.nslevels;
	if (piddir >= 0)
		close(piddir);
	return levels;
}

/*
 * A rootless podman container is its user's: its id and name say whose
 * ("<id>@<uid>", "<name>@<uid>"), so that no user's container can pass for
 * an engine's or another user's (by name, id or id prefix: --container,
 * start/stop container=, the folder in --output).
 */
static void rootless_container(struct pm_proc *p, uid_t owner)
{
	char id[sizeof(p->container)], name[sizeof(p->container_name)];

	snprintf(id, sizeof(id), "%s", p->container);
	container_name_lookup(id, owner, name, sizeof(name));
	if (snprintf(p->container, sizeof(p->container), "%s@%u", id, (unsigned)owner) >=
	    (int)sizeof(p->container))
		p->container[0] = '\0';
	else if (name[0] && snprintf(p->container_name, sizeof(p->container_name), "%s@%u", name,
				     (unsigned)owner) >= (int)sizeof(p->container_name))
		p->container_name[0] = '\0';
}

#define CONMON_SEARCH_MAX 16 /* ancestors looked at inside the container's pid namespace */

/*
 * Rootless podman without a cgroup of its own (conmon.h): the conmon
 * above `p`, the first ancestor in dynprof's pid namespace, when it and
 * `p` are in user namespaces of the same user, and runs as that user.
 */
static void rootless_by_conmon(int piddir, struct pm_proc *p)
{
	int levels = own_pid_levels(), pid = p->ppid;
	uid_t owner, theirs;

	if (p->nslevels <= levels || userns_owner(piddir, &owner) || owner == 0)
		return;
	for (int step = 0; step < CONMON_SEARCH_MAX && pid > 1; step++) {
		int fd = open_piddir(pid);
		struct pm_proc a;
		char argv[4096];
		ssize_t n;

		if (fd < 0 || read_status(fd, &a)) {
			if (fd >= 0)
				close(fd);
			return;
		}
		if (a.nslevels > levels) { /* still inside the container */
			pid = a.ppid;
			close(fd);
			continue;
		}
		n = read_head(fd, "cmdline", argv, sizeof(argv));
		if (a.uid == owner && !userns_owner(fd, &theirs) && theirs == owner && n > 0 &&
		    !conmon_argv_id(argv, (size_t)n, p->container, sizeof(p->container)))
			rootless_container(p, owner);
		close(fd);
		return;
	}
}

/*
 * The container's id and name (container.c, cgowner.c, containername.c):
 * only from cgroup folders root made. A bare top-level cgroup folder
 * (runc/crun's cgroupfs driver) names a container only for a process in a
 * pid namespace below dynprof's own.
 */
static void read_container(int piddir, struct pm_proc *p)
{
	char buf[2048];
	struct text_buf t;
	uid_t owner;

	p->container[0] = p->container_name[0] = '\0';
	if (read_text(piddir, "cgroup", buf, sizeof(buf), CGROUP_MAX, &t))
		return;
	cgowner_container(t.text, p->nslevels > own_pid_levels(), p->container,
			  sizeof(p->container), &owner);
	/* containerd's /<namespace>/<id> (engine_conf.h): named "<namespace>/<id>" below. */
	if (!p->container[0] && p->nslevels > own_pid_levels() &&
	    containerd_task_name(t.text, p->container, sizeof(p->container)))
		p->container[0] = '\0';
	release_text(&t);
	if (!p->container[0])
		rootless_by_conmon(piddir, p);
	if (!p->container[0] || strchr(p->container, '@'))
		return;
	if (owner) {
		rootless_container(p, owner);
		return;
	}
	container_name_lookup(p->container, 0, p->container_name, sizeof(p->container_name));
	if (!p->container_name[0] && strlen(p->container) != 64) /* runc/crun: the id is the name */
		snprintf(p->container_name, sizeof(p->container_name), "%s", p->container);
}

struct card_walk {
	const struct procscan_cards *c;
	int skip_fd;
	uint64_t cards;
};

static int card_fd(void *ctx, int fddir, const char *name, int fd, const char *target)
{
	struct card_walk *w = ctx;
	int index;

	if (fd == w->skip_fd)
		return 0;
	index = carddevs_fd_index(w->c->devs, w->c->patterns, fddir, name, target);
	if (index >= 0 && index <= PM_MAX_CARD_INDEX)
		w->cards |= 1ULL << index;
	return 0;
}

static int read_cards(int piddir, const struct procscan_cards *c, int skip_fd, uint64_t *cards)
{
	struct card_walk w = { .c = c, .skip_fd = skip_fd, .cards = 0 };
	int err = fdscan(piddir, card_fd, &w);

	*cards = w.cards;
	return err;
}

/* A fresh record of pid, and its /proc folder open: the fd, or a negative errno. */
static int begin_read(int pid, struct pm_proc *out)
{
	int piddir = open_piddir(pid);

	if (piddir < 0)
		return piddir;
	memset(out, 0, sizeof(*out));
	out->pid = pid;
	out->socket = out->socket_inside = out->home = "";
	return piddir;
}

int procscan_read(int pid, const struct procscan_cards *c, bool quick, struct pm_proc *out)
{
	int err, piddir = begin_read(pid, out);

	if (piddir < 0)
		return piddir;
	err = read_stat(piddir, out);
	if (!err && !quick)
		err = read_status(piddir, out);
	if (!err) {
		read_cmdline(piddir, out);
		read_exe(piddir, out->exe, sizeof(out->exe));
		if (!quick)
			read_container(piddir, out);
		/* Not root and another user's process: no cards seen (-EACCES). */
		if (c)
			read_cards(piddir, c, -1, &out->cards);
		out->complete = true;
	}
	close(piddir);
	return err;
}

int procscan_origin(int pid, struct pm_proc *out)
{
	int err, piddir = begin_read(pid, out);

	if (piddir < 0)
		return piddir;
	err = read_status(piddir, out);
	if (!err) {
		read_cmdline(piddir, out);
		read_container(piddir, out);
	}
	close(piddir);
	return err;
}

int procscan_container(struct pm_proc *p)
{
	struct pm_proc now;
	int err, piddir = begin_read(p->pid, &now);

	if (piddir < 0)
		return piddir;
	err = read_stat(piddir, &now);
	if (!err && now.start_time != p->start_time)
		err = -ESRCH; /* the pid is another process's now */
	if (!err)
		read_container(piddir, p);
	close(piddir);
	return err;
}

int procscan_cards(int pid, unsigned long long start, const struct procscan_cards *c, int skip_fd,
		   uint64_t *cards)
{
	struct pm_proc p;
	int err, piddir = open_piddir(pid);

	*cards = 0;
	if (piddir < 0)
		return piddir;
	err = read_stat(piddir, &p);
	if (!err && start && p.start_time != start)
		err = -ESRCH;
	if (!err)
		err = read_cards(piddir, c, skip_fd, cards);
	close(piddir);
	return err;
}

int procscan_image(int pid, struct pm_proc *p)
{
	int piddir = open_piddir(pid);

	p->exe[0] = p->cmdline[0] = '\0';
	if (piddir < 0)
		return piddir;
	read_exe(piddir, p->exe, sizeof(p->exe));
	read_cmdline(piddir, p);
	close(piddir);
	return p->exe[0] ? 0 : -ENOENT;
}

int procscan_exe(int pid, char *out, size_t len)
{
	int piddir = open_piddir(pid);

	if (len)
		out[0] = '\0';
	if (piddir < 0)
		return piddir;
	if (len)
		read_exe(piddir, out, len);
	close(piddir);
	return out[0] ? 0 : -ENOENT;
}
