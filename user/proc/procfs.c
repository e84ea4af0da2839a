// SPDX-License-Identifier: MIT
/* Facts about a process from /proc, and passwd homes (see procfs.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/procstat.h"
#include "common/rootfile.h"
#include "proc/procfs.h"
#include "shared/decimal.h"

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

#define STATUS_MAX (256 * 1024) /* status grows with Groups:, rarely past 4 KiB */
#define STAT_MAX 4096           /* one line; comm is at most 16 bytes */
#define COMM_MAX 64
#define UID_MAP_MAX (64 * 1024) /* up to 340 lines */
#define ENV_CHUNK 16384

/* ---- small helpers ---------------------------------------------------- */

/* Open /proc/<pid>/<what>; a vanished process reads as -ESRCH. */
static int open_proc(int pid, const char *what, int flags)
{
	char path[64];
	int fd;

	if (pid <= 0)
		return -ESRCH;
	snprintf(path, sizeof(path), "/proc/%d/%s", pid, what);
	fd = open(path, flags | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	return fd;
}

static ssize_t read_some(int fd, void *buf, size_t len)
{
	for (;;) {
		ssize_t n = read(fd, buf, len);

		if (n >= 0 || errno != EINTR)
			return n < 0 ? -errno : n;
	}
}

/* Read /proc/<pid>/<what> whole, bounded by max. */
static int read_proc(int pid, const char *what, size_t max, char **buf, size_t *len)
{
	int fd = open_proc(pid, what, O_RDONLY);
	int err;

	if (fd < 0)
		return fd;
	err = rootfile_read(fd, max, buf, len);
	close(fd);
	/* A process that exits while we read gives ESRCH on some files. */
	return err;
}

/* ---- status -------------------------------------------------------------- */

/* The value part of `key` when `line` (of length n) starts with it. */
static const char *line_value(const char *line, size_t n, const char *key)
{
	size_t k = strlen(key);

	if (n < k || memcmp(line, key, k))
		return NULL;
	return line + k;
}

/*
 * The next blank-separated number of a status value at *v (before end),
 * at most max: 1 and *out, 0 at the end, -EINVAL for junk.
 */
static int status_next(const char **v, const char *end, uint64_t max, uint64_t *out)
{
	const char *s;

	while (*v < end && (**v == ' ' || **v == '\t'))
		(*v)++;
	if (*v >= end)
		return 0;
	s = *v;
	while (*v < end && **v != ' ' && **v != '\t')
		(*v)++;
	return decimal_span(s, (size_t)(*v - s), 0, max, out) ? -EINVAL : 1;
}

/*
 * One number of a status line's blank-separated list: the first, or with
 * want_last the last. -EINVAL when the line holds no number or junk.
 */
static int status_field(const char *v, const char *end, int want_last, unsigned long long max,
			unsigned long long *out)
{
	uint64_t x;
	int found = 0, rc;

	while ((rc = status_next(&v, end, max, &x)) == 1) {
		*out = x;
		found = 1;
		if (!want_last)
			break;
	}
	return rc < 0 || !found ? -EINVAL : 0;
}

int procfs_parse_status(const char *text, uid_t *uid, int *nspid_inner)
{
	unsigned long long u = 0, nspid = 0, pid = 0;
	int have_uid = 0, have_nspid = 0, have_pid = 0;
	const char *line = text;

	while (*line) {
		const char *eol = strchr(line, '\n');
		size_t n = eol ? (size_t)(eol - line) : strlen(line);
		const char *end = line + n, *v;

		if (!have_uid && (v = line_value(line, n, "Uid:")))
			have_uid = !status_field(v, end, 0, UINT32_MAX - 1, &u);
		else if (!have_nspid && (v = line_value(line, n, "NSpid:")))
			have_nspid = !status_field(v, end, 1, INT32_MAX, &nspid) && nspid > 0;
		else if (!have_pid && (v = line_value(line, n, "Pid:")))
			have_pid = !status_field(v, end, 0, INT32_MAX, &pid) && pid > 0;
		line = eol ? eol + 1 : end;
	}
	if (!have_uid || (!have_nspid && !have_pid))
		return -EINVAL;
	*uid = (uid_t)u;
	*nspid_inner = (int)(have_nspid ? nspid : pid);
	return 0;
}

int procfs_read_status(int pid, uid_t *uid, int *nspid_inner)
{
	char *buf;
	size_t len;
	int err = read_proc(pid, "status", STATUS_MAX, &buf, &len);

	if (err)
		return err;
	err = procfs_parse_status(buf, uid, nspid_inner);
	free(buf);
	return err;
}

/* ---- creds ------------------------------------------------------------- */

/* The blank-separated numbers of a status value (at most max kept): how many, or -EINVAL. */
static int status_list(const char *v, const char *end, uint64_t *out, int max)
{
	uint64_t x;
	int n = 0, rc;

	while ((rc = status_next(&v, end, UINT32_MAX - 1, &x)) == 1)
		if (n < max)
			out[n++] = x;
	return rc < 0 ? rc : n;
}

int procfs_parse_creds(const char *text, struct proc_creds *c)
{
	uint64_t ids[PROCFS_GROUPS_MAX];
	bool have_uid = false, have_gid = false;
	const char *line = text;

	c->ngroups = 0;
	while (*line) {
		const char *eol = strchr(line, '\n');
		size_t n = eol ? (size_t)(eol - line) : strlen(line);
		const char *end = line + n, *v;
		int k;

		if (!have_uid && (v = line_value(line, n, "Uid:"))) {
			if (status_list(v, end, ids, 4) < 2)
				return -EINVAL;
			c->uid = (uid_t)ids[1];
			have_uid = true;
		} else if (!have_gid && (v = line_value(line, n, "Gid:"))) {
			if (status_list(v, end, ids, 4) < 2)
				return -EINVAL;
			c->gid = (gid_t)ids[1];
			have_gid = true;
		} else if ((v = line_value(line, n, "Groups:"))) {
			k = status_list(v, end, ids, PROCFS_GROUPS_MAX);
			if (k < 0)
				return -EINVAL;
			for (int i = 0; i < k; i++)
				c->groups[i] = (gid_t)ids[i];
			c->ngroups = k;
		}
		line = eol ? eol + 1 : end;
	}
	return have_uid && have_gid ? 0 : -EINVAL;
}

int procfs_read_creds(int pid, struct proc_creds *c)
{
	char *buf;
	size_t len;
	int err = read_proc(pid, "status", STATUS_MAX, &buf, &len);

	if (err)
		return err;
	err = procfs_parse_creds(buf, c);
	free(buf);
	return err;
}

/* ---- uid_map ------------------------------------------------------------- */

int procfs_parse_uid_map(const char *text, uid_t uid, uid_t *inner)
{
	const char *p = text;

	while (*p) {
		uint64_t f[3]; /* inside, outside, count */

		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		if (!*p)
			break;
		for (int i = 0; i < 3; i++) {
			size_t used;

			while (*p == ' ' || *p == '\t')
				p++;
			if (decimal_prefix(p, SIZE_MAX, UINT64_MAX, &f[i], &used))
				return -EINVAL;
			p += used;
		}
		if (uid >= f[1] && uid - f[1] < f[2]) {
			*inner = (uid_t)(f[0] + (uid - f[1]));
			return 0;
		}
	}
	return -ENOENT;
}

int procfs_inner_uid(int pid, uid_t uid, uid_t *inner)
{
	char *buf;
	size_t len;
	int err = read_proc(pid, "uid_map", UID_MAP_MAX, &buf, &len);

	*inner = uid;
	if (err == -ESRCH)
		return err;
	if (err)
		return 0; /* no user namespaces (old kernel, locked down): as seen */
	err = procfs_parse_uid_map(buf, uid, inner);
	free(buf);
	if (err == -EINVAL)
		*inner = uid;
	return err == -EINVAL ? 0 : err;
}

/* Map one id through a map file's text; -ENOENT when unmapped. */
static int map_id(const char *map, unsigned id, unsigned *inner)
{
	uid_t in;
	int err = procfs_parse_uid_map(map, (uid_t)id, &in);

	if (err == 0)
		*inner = (unsigned)in;
	return err;
}

int procfs_inner_creds(int pid, struct proc_creds *c)
{
	char *umap = NULL, *gmap = NULL;
	size_t len;
	int err = read_proc(pid, "uid_map", UID_MAP_MAX, &umap, &len), kept = 0;

	if (!err)
		err = read_proc(pid, "gid_map", UID_MAP_MAX, &gmap, &len);
	if (!err)
		err = map_id(umap, c->uid, &c->uid);
	if (!err)
		err = map_id(gmap, c->gid, &c->gid);
	for (int i = 0; !err && i < c->ngroups; i++)
		if (map_id(gmap, c->groups[i], &c->groups[kept]) == 0)
			kept++;
	if (!err)
		c->ngroups = kept;
	free(umap);
	free(gmap);
	return err;
}

/* ---- environ ------------------------------------------------------------- */

/*
 * The environ block is scanned byte by byte as it is read, so its size
 * (up to a quarter of the stack limit) never needs one buffer.
 */
enum env_state { ENV_MATCH, ENV_SKIP, ENV_COPY };

struct env_scan {
	const char *name;
	size_t nlen;
	size_t pos; /* name bytes matched in the current entry */
	enum env_state state;
	char *out;
	size_t outlen, olen;
	int found, overflow, done;
};

static void env_feed(struct env_scan *s, const char *p, size_t n)
{
	for (size_t i = 0; i < n && !s->done; i++) {
		char c = p[i];

		if (c == '\0') {
			if (s->state == ENV_COPY) {
				s->done = 1;
				break;
			}
			s->state = ENV_MATCH;
			s->pos = 0;
			continue;
		}
		switch (s->state) {
		case ENV_MATCH:
			if (s->pos < s->nlen) {
				if (c == s->name[s->pos])
					s->pos++;
				else
					s->state = ENV_SKIP;
			} else if (c == '=') {
				s->state = ENV_COPY;
				s->found = 1;
			} else {
				s->state = ENV_SKIP;
			}
			break;
		case ENV_COPY:
			if (s->olen + 1 < s->outlen)
				s->out[s->olen++] = c;
			else
				s->overflow = 1;
			break;
		case ENV_SKIP:
			break;
		}
	}
}

static int env_begin(struct env_scan *s, const char *name, char *out, size_t outlen)
{
	if (!name || !*name || strchr(name, '=') || !out || outlen == 0)
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	s->name = name;
	s->nlen = strlen(name);
	s->out = out;
	s->outlen = outlen;
	out[0] = '\0';
	return 0;
}

static int env_end(struct env_scan *s)
{
	s->out[s->olen] = '\0';
	if (!s->found)
		return -ENOENT;
	return s->overflow ? -ERANGE : 0;
}

int procfs_parse_environ(const char *buf, size_t len, const char *name, char *out, size_t outlen)
{
	struct env_scan s;
	int err = env_begin(&s, name, out, outlen);

	if (err)
		return err;
	env_feed(&s, buf, len);
	return env_end(&s);
}

int procfs_environ_get_many(int pid, struct procfs_env_want *want, int n)
{
	struct env_scan s[PROCFS_ENV_MANY_MAX];
	char chunk[ENV_CHUNK];
	int fd, left = n;

	if (n < 1 || n > PROCFS_ENV_MANY_MAX)
		return -EINVAL;
	for (int i = 0; i < n; i++) {
		want[i].rc = env_begin(&s[i], want[i].name, want[i].out, want[i].outlen);
		if (want[i].rc)
			return want[i].rc;
	}
	fd = open_proc(pid, "environ", O_RDONLY);
	if (fd < 0)
		return fd;
	/* One read of the block for every name: each scanner stops at its own entry. */
	while (left) {
		ssize_t got = read_some(fd, chunk, sizeof(chunk));

		if (got < 0) {
			close(fd);
			return (int)got;
		}
		if (got == 0)
			break;
		left = 0;
		for (int i = 0; i < n; i++) {
			env_feed(&s[i], chunk, (size_t)got);
			left += !s[i].done;
		}
	}
	close(fd);
	for (int i = 0; i < n; i++)
		want[i].rc = env_end(&s[i]);
	return 0;
}

int procfs_environ_get(int pid, const char *name, char *out, size_t outlen)
{
	struct procfs_env_want w = { name, out, outlen, 0 };
	int err = procfs_environ_get_many(pid, &w, 1);

	return err ? err : w.rc;
}

/* ---- stat, comm, alive ----------------------------------------------------- */

int procfs_parse_stat(const char *text, char *state, unsigned long long *start)
{
	struct procstat st;
	int err = procstat_parse(text, &st);

	if (err)
		return err;
	if (state)
		*state = st.state;
	if (start)
		*start = st.start;
	return 0;
}

static int read_stat(int pid, char *state, unsigned long long *start)
{
	char *buf;
	size_t len;
	int err = read_proc(pid, "stat", STAT_MAX, &buf, &len);

	if (err)
		return err;
	err = procfs_parse_stat(buf, state, start);
	free(buf);
	return err;
}

int procfs_start_time(int pid, unsigned long long *start)
{
	return read_stat(pid, NULL, start);
}

bool procfs_same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int procfs_alive(int pid)
{
	char state = 0;

	if (read_stat(pid, &state, NULL))
		return 0;
	return !procstat_dead(state);
}

void procfs_comm(int pid, char *out, size_t outlen)
{
	char *buf = NULL;
	size_t len = 0;

	if (!out || outlen == 0)
		return;
	if (read_proc(pid, "comm", COMM_MAX, &buf, &len) == 0) {
		while (len && buf[len - 1] == '\n')
			buf[--len] = '\0';
	}
	snprintf(out, outlen, "%s", buf && len ? buf : "?");
	free(buf);
}

/* ---- passwd ---------------------------------------------------------------- */

/*
 * The next well-formed entry of passwd text from *cur on (blank lines,
 * '#' comments and lines of fewer than 7 fields or an empty name
 * skipped): its fields f[i] .. fe[i], the uid parsed (-1: not a number).
 * false at the end.
 */
struct passwd_entry {
	const char *f[7], *fe[7];
	int64_t uid;
};

static bool passwd_next(const char **cur, struct passwd_entry *e)
{
	while (**cur) {
		const char *line = *cur, *eol = strchr(line, '\n');
		const char *end = eol ? eol : line + strlen(line);
		uint64_t u;
		int nf = 1;

		*cur = eol ? eol + 1 : end;
		while (line < end && (*line == ' ' || *line == '\t'))
			line++;
		if (end > line && end[-1] == '\r')
			end--;
		if (line == end || *line == '#')
			continue;
		/* name:passwd:uid:gid:gecos:home:shell (the shell is the rest) */
		e->f[0] = line;
		for (const char *p = line; p < end && nf < 7; p++) {
			if (*p == ':') {
				e->fe[nf - 1] = p;
				e->f[nf++] = p + 1;
			}
		}
		if (nf < 7 || e->fe[0] == e->f[0])
			continue;
		e->fe[6] = end;
		e->uid = decimal_span(e->f[2], (size_t)(e->fe[2] - e->f[2]), 0, UINT32_MAX - 1, &u) ?
				 -1 :
				 (int64_t)u;
		return true;
	}
	return false;
}

int passwd_parse_home(const char *text, uid_t uid, char *home, size_t len)
{
	struct passwd_entry e;
	const char *cur = text;
	size_t hl;

	if (!text || !home || len == 0)
		return -EINVAL;
	while (passwd_next(&cur, &e)) {
		if (e.uid != (int64_t)uid)
			continue;
		/* First match wins, as getpwuid() on a files database. */
		hl = (size_t)(e.fe[5] - e.f[5]);
		if (hl == 0)
			return -ENOENT;
		while (hl > 1 && e.f[5][hl - 1] == '/')
			hl--;
		if (hl >= len)
			return -ENAMETOOLONG;
		memcpy(home, e.f[5], hl);
		home[hl] = '\0';
		return 0;
	}
	return -ENOENT;
}

int passwd_parse_uid(const char *text, const char *name, uid_t *uid)
{
	size_t n = name ? strlen(name) : 0;
	struct passwd_entry e;
	const char *cur = text;

	if (!text || !n)
		return -EINVAL;
	while (passwd_next(&cur, &e)) {
		/* First match wins, as getpwnam() on a files database. */
		if ((size_t)(e.fe[0] - e.f[0]) == n && !memcmp(e.f[0], name, n) && e.uid >= 0) {
			*uid = (uid_t)e.uid;
			return 0;
		}
	}
	return -ENOENT;
}

/* Whether the entry at `at` is the first of its name (getpwnam's, then). */
static bool first_of_name(const char *text, const char *at, const char *name, size_t n)
{
	struct passwd_entry e;
	const char *cur = text;

	while (passwd_next(&cur, &e) && e.f[0] < at)
		if ((size_t)(e.fe[0] - e.f[0]) == n && !memcmp(e.f[0], name, n))
			return false;
	return true;
}

int passwd_parse_names(const char *text, uid_t uid, char *names, size_t len)
{
	struct passwd_entry e;
	const char *cur = text;
	size_t used = 0;

	if (!text || !names || len < 2)
		return -EINVAL;
	names[0] = '\0';
	while (passwd_next(&cur, &e)) {
		size_t n = (size_t)(e.fe[0] - e.f[0]);

		if (e.uid != (int64_t)uid || !first_of_name(text, e.f[0], e.f[0], n))
			continue;
		if (used + n + 2 > len) /* ':' name ':' and the NUL: the rest is not kept */
			break;
		names[used++] = ':';
		memcpy(names + used, e.f[0], n);
		used += n;
		names[used] = ':';
		names[used + 1] = '\0';
	}
	return used ? 0 : -ENOENT;
}

bool passwd_names_have(const char *names, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = strchr(names, ':'); p && p[1]; p = strchr(p + 1, ':'))
		if (!strncmp(p + 1, name, n) && p[1 + n] == ':' && n)
			return true;
	return false;
}

int passwd_home_at(int rootfd, uid_t uid, char *home, size_t len)
{
	char *buf;
	size_t n;
	int err, fd = rootfile_open(rootfd, "/etc/passwd");

	if (fd < 0)
		return fd;
	err = rootfile_read(fd, PROCFS_PASSWD_MAX, &buf, &n);
	close(fd);
	if (err)
		return err;
	err = passwd_parse_home(buf, uid, home, len);
	free(buf);
	return err;
}

int passwd_home_in_root(const char *root, uid_t uid, char *home, size_t len)
{
	int err, rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (rootfd < 0)
		return -errno;
	err = passwd_home_at(rootfd, uid, home, len);
	close(rootfd);
	return err;
}

/* ---- roots ------------------------------------------------------------------ */

int procfs_open_root(int pid)
{
	return open_proc(pid, "root", O_PATH | O_DIRECTORY);
}
