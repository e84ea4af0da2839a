// SPDX-License-Identifier: MIT
/* Locating a target's dynamic-profiling socket without touching it (see socklocate.h). */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dynprof/proto.h"
#include "common/rootfile.h"
#include "shared/clock.h"
#include "common/hostpw.h"
#include "proc/fdscan.h"
#include "proc/pidmemo.h"
#include "sock/netunix.h"
#include "proc/procfs.h"
#include "sock/socklocate.h"
#include "ns/targetfs.h"
#include "common/errbuf.h"
#include "shared/cannkey.h"
#include "shared/decimal.h"
#include "shared/array_size.h"

/* A human reason; a long path may cut it short, which is fine for a message. */
#define WHY(ts, ...) ((void)errbuf_set((ts)->why, sizeof((ts)->why), __VA_ARGS__))

static const char *const socket_prefixes[] = {
	DYNPROF_SOCKET_PREFIX,
	DYNPROF_SOCKET_PREFIX_ALT,
};

/*
 * The env key as CANN names its socket with it: the raw text when stoi
 * reads it as > 0 ("0777" stays "0777"), else none. Its value goes to *key.
 */
static int env_key(const char *s, char text[SOCKLOCATE_KEY_MAX], int *key)
{
	long v;

	if (cann_key_parse(s, &v) || v <= 0 || strlen(s) >= SOCKLOCATE_KEY_MAX)
		return -EINVAL;
	strcpy(text, s);
	*key = (int)v;
	return 0;
}

/* Set name, path and host_path for `prefix` + `key` under ts->home. */
static int fill_paths(struct sock_location *ts, const char *prefix, const char *key)
{
	int n;

	n = snprintf(ts->name, sizeof(ts->name), "%s%s", prefix, key);
	if (n < 0 || (size_t)n >= sizeof(ts->name))
		return -ENAMETOOLONG;
	ts->flavour = strcmp(prefix, DYNPROF_SOCKET_PREFIX) ? SOCK_FLAVOUR_FILE_ALT : SOCK_FLAVOUR_FILE;
	if (!ts->home[0]) {
		ts->path[0] = ts->host_path[0] = '\0';
		return 0;
	}
	n = snprintf(ts->path, sizeof(ts->path), "%s/%s", strcmp(ts->home, "/") ? ts->home : "",
		     ts->name);
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

/* The keys to try, in order, duplicates skipped. Returns how many. */
static int collect_keys(struct sock_location *ts, char keys[2][SOCKLOCATE_KEY_MAX])
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
	/*
	 * Unset, too long or <= 0: CANN keys on its pid. (Not an integer at
	 * all: CANN starts no server; the pid's name is looked for all the same.)
	 */
	if (err == 0 && env_key(val, keys[0], &key) == 0)
		n++;
	snprintf(keys[n], SOCKLOCATE_KEY_MAX, "%d", ts->nspid);
	if (n == 0 || strcmp(keys[0], keys[1]))
		n++;
	return n;
}

/*
 * Homes already looked up, by process (pid, start time, uid): a target's
 * passwd file is read by its helper (a fork) once, not at every re-check
 * of its socket; a file that stalled the helper is not waited for again
 * either. Keyed by pid; when HOME_MEMO_MAX are kept, those of processes
 * gone are let go (all, if none is).
 */
/*
 * The homes found, by (pid, start, uid inside). A caller that may not wait
 * (the loop: the process model's looks, every 100 ms): a home not known
 * yet is read beside it, marked meanwhile as -EINPROGRESS.
 */
static struct pidmemo homes = PIDMEMO_INIT;
#define HOME_RETRY_MS 2000 /* a read that failed for now, read again after this long */
static _Thread_local bool no_wait;

static struct pidmemo_key home_key(const struct sock_location *ts)
{
	return (struct pidmemo_key){ .pid = ts->pid, .start = ts->start_time, .tag = ts->inner_uid };
}

/*
 * What a passwd read says for good: there is none, or no such uid, or it
 * may not be read with the target's rights, or it is not a file one reads.
 * Anything else (a helper that timed out or died, no memory or fds) failed
 * for now.
 */
static bool settled(int err)
{
	return err == 0 || err == -ENOENT || err == -EPERM || err == -EACCES || err == -ENOTDIR ||
	       err == -ELOOP || err == -EMEDIUMTYPE || err == -EFBIG || err == -ENAMETOOLONG;
}

/* A caller that may wait reads it itself rather than wait for the look under way. */
static bool memo_get(struct sock_location *ts, int *err)
{
	struct pidmemo_key k = home_key(ts);
	char text[PATH_MAX + SOCKLOCATE_NAMES_MAX] = ""; /* kept as "home\0names\0" */
	bool hit = pidmemo_get(&homes, &k, no_wait, err, text, sizeof(text) - 1);
	int64_t at;

	/*
	 * A read that failed for now (under load a helper may miss its time)
	 * is read again HOME_RETRY_MS later: kept for good, that process's
	 * socket was never found, and it never joined. Not sooner: a user who
	 * stops the helpers would have one made at every look.
	 */
	if (hit && *err != -EINPROGRESS && !settled(*err)) {
		memcpy(&at, text, sizeof(at));
		return clock_ms() - at < HOME_RETRY_MS;
	}
	if (hit) {
		size_t h = strnlen(text, sizeof(ts->home) - 1);

		memcpy(ts->home, text, h); /* put from the same fields: it fits */
		ts->home[h] = '\0';
		snprintf(ts->user_names, sizeof(ts->user_names), "%.*s", SOCKLOCATE_NAMES_MAX - 1,
			 text + h + 1);
	}
	return hit;
}

static void memo_put(const struct sock_location *ts, int err)
{
	struct pidmemo_key k = home_key(ts);
	size_t h = strlen(ts->home) + 1, n = strlen(ts->user_names) + 1;
	int64_t now = clock_ms();
	char *text;

	if (!settled(err)) { /* when it failed: memo_get reads it again later */
		pidmemo_put(&homes, &k, err, &now, sizeof(now));
		return;
	}
	text = malloc(h + n);
	if (!text)
		return; /* read again next time */
	memcpy(text, ts->home, h);
	memcpy(text + h, ts->user_names, n);
	pidmemo_put(&homes, &k, err, text, h + n);
	free(text);
}

static int passwd_home(struct sock_location *ts);

static void lookup_main(void *arg)
{
	(void)passwd_home(arg); /* kept in the memo: the loop's next look has it */
}

/* The home of ts's process read beside the caller: -EINPROGRESS (the look is marked). */
static int lookup_beside(const struct sock_location *ts)
{
	struct sock_location *copy = malloc(sizeof(*copy));
	struct pidmemo_key k = home_key(ts);

	if (!copy)
		return -EINPROGRESS; /* tried again at the next look */
	*copy = *ts;
	return pidmemo_beside(&homes, &k, lookup_main, copy);
}

/*
 * The home of ts->inner_uid in the passwd file of the target's own root,
 * read with its rights, and the names that file gives that uid (user=).
 */
static int passwd_home(struct sock_location *ts)
{
	struct targetfs fs;
	char *text = NULL;
	size_t n;
	int err;

	ts->home[0] = ts->user_names[0] = '\0';
	if (memo_get(ts, &err))
		return err;
	/* Its own filesystem, through a helper with its user's uid, which that user may stop. */
	if (no_wait && targetfs_foreign(ts->pid))
		return lookup_beside(ts);
	err = targetfs_open(&fs, ts->pid);
	if (err)
		return err;
	err = targetfs_read(&fs, "/etc/passwd", PROCFS_PASSWD_MAX, &text, &n);
	if (err == -EPERM && fs.why[0])
		WHY(ts, "%s; " TARGETFS_REFUSED, fs.why);
	targetfs_close(&fs);
	if (err == 0) {
		err = passwd_parse_home(text, ts->inner_uid, ts->home, sizeof(ts->home));
		if (passwd_parse_names(text, ts->inner_uid, ts->user_names, sizeof(ts->user_names)))
			ts->user_names[0] = '\0';
		free(text);
	}
	if (err)
		ts->home[0] = '\0';
	if (err != -ESRCH && err != -EINTR)
		memo_put(ts, err);
	return err;
}

static int find_home(struct sock_location *ts, int rootfd)
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
	err = passwd_home(ts);
	if (err == -EINPROGRESS) {
		WHY(ts, "the home of uid %u of pid %d is being read from its passwd",
		    (unsigned)ts->inner_uid, ts->pid);
		return err;
	}
	/*
	 * Not in its passwd file: the name service's (LDAP, SSSD...), as getpwuid()
	 * in the target gives it; only when it shares dynprof's root and so, most
	 * likely, its nsswitch setup.
	 */
	if (err == -ENOENT && ts->inner_uid == ts->uid && is_our_root(rootfd))
		err = hostpw_home(ts->uid, ts->home, sizeof(ts->home));
	if (err == 0)
		return 0;
	ts->home[0] = '\0';
	if (err == -ENOENT)
		WHY(ts, "uid %u has no home in the passwd file of pid %d", (unsigned)ts->inner_uid,
		    ts->pid);
	else if (err == -EPERM && ts->why[0])
		; /* passwd_home said why: refused, not unreadable */
	else if (err == -EACCES)
		WHY(ts, "cannot read /proc/%d/root/etc/passwd: permission denied", ts->pid);
	else
		WHY(ts, "cannot read /proc/%d/root/etc/passwd: %s", ts->pid, rootfile_strerror(err));
	return err;
}

/* The key a name was made with: its text, and its value (0 when not a plain number). */
static void set_key(struct sock_location *ts, const char *key)
{
	long v;

	snprintf(ts->key_text, sizeof(ts->key_text), "%.*s", (int)sizeof(ts->key_text) - 1, key);
	ts->key = cann_key_parse(key, &v) || v <= 0 ? 0 : (int)v;
}

/* Look for the candidates in the open home folder. */
static int find_in_home(struct sock_location *ts, int homefd, char keys[][SOCKLOCATE_KEY_MAX], int nkeys)
{
	int first_bad = 0;
	const char *bad_key = NULL;
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
				set_key(ts, keys[k]);
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
		set_key(ts, bad_key);
		WHY(ts, "%s is %s, not a socket: not used", ts->host_path,
		    first_bad == -ELOOP ? "a symlink" : "another kind of file");
		return first_bad;
	}
	fill_paths(ts, socket_prefixes[0], keys[0]);
	set_key(ts, keys[0]);
	if (nkeys > 1)
		WHY(ts, "no %s (nor %s%s, nor the %s names) in %s", ts->name, socket_prefixes[0],
		    keys[1], socket_prefixes[1], ts->home);
	else
		WHY(ts, "no %s (nor %s%s) in %s", ts->name, socket_prefixes[1], keys[0], ts->home);
	return -ENOENT;
}

/* The file flavours: the home in the target's root, the candidates in it. */
static int find_file(struct sock_location *out, char keys[][SOCKLOCATE_KEY_MAX], int nkeys)
{
	int rootfd, homefd, err, pid = out->pid;

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

	homefd = rootfile_open_in(rootfd, out->home, O_PATH | O_DIRECTORY);
	close(rootfd);
	if (homefd < 0) {
		err = homefd;
		if (err == -ENOENT || err == -ENOTDIR) {
			WHY(out, "home %s of uid %u does not exist in the root of pid %d",
			    out->home, (unsigned)out->inner_uid, pid);
			return -ENOENT;
		}
		WHY(out, "cannot open home %s in the root of pid %d: %s", out->home, pid, strerror(-err));
		return err == -EPERM ? -EACCES : err;
	}
	err = find_in_home(out, homefd, keys, nkeys);
	close(homefd);
	return err;
}

/* ---- the abstract flavour: a listening row the target owns ---------------- */

struct abstract_rows {
	unsigned long inode[NETUNIX_MAX_INODES];
	char key[NETUNIX_MAX_INODES][20];
	int n;
	int owned; /* index of the first row whose inode the target holds, or -1 */
};

static int collect_abstract(void *ctx, const struct netunix_row *r)
{
	struct abstract_rows *a = ctx;
	const char *key;
	size_t klen;

	if (!netunix_is_listener(r) || a->n == NETUNIX_MAX_INODES ||
	    netunix_abstract_key(r, DYNPROF_SOCKET_PREFIX_ALT, &key, &klen))
		return 0;
	a->inode[a->n] = r->inode;
	snprintf(a->key[a->n], sizeof(a->key[a->n]), "%.*s", (int)klen, key);
	a->n++;
	return 0;
}

static int owns_abstract(void *ctx, int fddir, const char *name, int fd, const char *target)
{
	struct abstract_rows *a = ctx;
	unsigned long inode = fdscan_socket_inode(target);

	(void)fddir;
	(void)name;
	(void)fd;
	for (int i = 0; inode && i < a->n; i++)
		if (a->inode[i] == inode) {
			a->owned = i;
			return 1;
		}
	return 0;
}

/*
 * CANN 8.5.0 / 9.0.0-beta.1: \0dyn_prof_sock_<key>, no file. The key may be
 * msprof's pid (launch mode), so the name is not guessed: the listening
 * @dyn_prof_sock_ row of the target's netns that one of its fds holds.
 * 0 with the location filled, -ENOENT when there is none.
 */
static int find_abstract(struct sock_location *out)
{
	struct abstract_rows *a = calloc(1, sizeof(*a));
	char dir[32];
	int piddir, err;

	if (!a)
		return -ENOMEM;
	a->owned = -1;
	snprintf(dir, sizeof(dir), "/proc/%d", out->pid);
	piddir = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (piddir < 0) {
		free(a);
		return errno == ENOENT ? -ESRCH : -errno;
	}
	err = netunix_scan(piddir, collect_abstract, a);
	if (!err && a->n)
		err = fdscan(piddir, owns_abstract, a);
	close(piddir);
	if (err < 0 || a->owned < 0) {
		free(a);
		return err < 0 ? err : -ENOENT;
	}
	out->flavour = SOCK_FLAVOUR_ABSTRACT;
	set_key(out, a->key[a->owned]);
	out->listen_ino = a->inode[a->owned];
	snprintf(out->name, sizeof(out->name), "%s%s", DYNPROF_SOCKET_PREFIX_ALT, a->key[a->owned]);
	snprintf(out->path, sizeof(out->path), "@%s", out->name);
	snprintf(out->host_path, sizeof(out->host_path), "@%s", out->name);
	free(a);
	return 0;
}

int socklocate_find(int pid, struct sock_location *out)
{
	unsigned long long start2 = 0;
	char keys[2][SOCKLOCATE_KEY_MAX];
	int nkeys, err;

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
	snprintf(keys[0], sizeof(keys[0]), "%d", out->nspid);
	fill_paths(out, socket_prefixes[0], keys[0]);
	set_key(out, keys[0]);
	nkeys = collect_keys(out, keys);
	if (nkeys < 0)
		return nkeys;
	fill_paths(out, socket_prefixes[0], keys[0]);
	set_key(out, keys[0]);

	err = find_file(out, keys, nkeys);
	if (err && err != -ESRCH && err != -ENOMEM) {
		/* No file (or none dynprof may see): the abstract name, if the target listens on one. */
		struct sock_location *alt = malloc(sizeof(*alt));

		if (!alt)
			return -ENOMEM;
		*alt = *out;
		if (find_abstract(alt) == 0) {
			*out = *alt;
			err = 0;
		}
		free(alt);
	}
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

void socklocate_no_wait(bool on)
{
	no_wait = on;
}

int socklocate_names(const struct sock_location *ts, char names[][SOCKLOCATE_NAME_MAX], int max)
{
	char keys[2][SOCKLOCATE_KEY_MAX];
	int n = 0;

	snprintf(keys[0], sizeof(keys[0]), "%s", ts->key_text);
	snprintf(keys[1], sizeof(keys[1]), "%d", ts->nspid);
	for (int k = 0; k < 2; k++) {
		if (k == 1 && !strcmp(keys[0], keys[1]))
			break;
		for (size_t p = 0; p < ARRAY_SIZE(socket_prefixes) && n < max; p++)
			snprintf(names[n++], SOCKLOCATE_NAME_MAX, "%s%s", socket_prefixes[p], keys[k]);
	}
	return n;
}
