/* SPDX-License-Identifier: MIT */
/*
 * Reading facts about a process from /proc, and the passwd file of its root.
 * Parsers of text are split from the file reading so unit tests feed them
 * strings. Functions return 0 or a negative errno; nothing here prints.
 *
 * Every read is bounded (a few KiB for status/stat/comm, 1 MiB for passwd,
 * environ is scanned in fixed chunks without being held whole), every fd is
 * O_CLOEXEC and closed before return.
 */
#ifndef DYNPROF_PROCFS_H
#define DYNPROF_PROCFS_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "shared/compiler.h"

/* Largest passwd file read (bytes); larger files give -EFBIG. */
#define PROCFS_PASSWD_MAX (1024 * 1024)

/*
 * From /proc/<pid>/status: real uid (first field of Uid:) and the innermost
 * NSpid (last field of NSpid:; the Pid: value on kernels without NSpid).
 * -ESRCH: no such process; -EINVAL: text without Uid: or a pid.
 */
int procfs_read_status(int pid, uid_t *uid, int *nspid_inner) DP_MUST_CHECK;
int procfs_parse_status(const char *text, uid_t *uid, int *nspid_inner) DP_MUST_CHECK;

/*
 * The ids a process acts with, from status: effective uid and gid (the
 * second field of Uid: and Gid:) and its supplementary groups (Groups:, at
 * most PROCFS_GROUPS_MAX: more are dropped, which only takes rights away).
 * -EINVAL when Uid: or Gid: is missing or malformed.
 */
#define PROCFS_GROUPS_MAX 64
struct proc_creds {
	uid_t uid;
	gid_t gid;
	int ngroups;
	gid_t groups[PROCFS_GROUPS_MAX];
};
int procfs_parse_creds(const char *text, struct proc_creds *c) DP_MUST_CHECK;
int procfs_read_creds(int pid, struct proc_creds *c) DP_MUST_CHECK;

/*
 * The uid a process sees itself as (getuid() inside its user namespace)
 * for the uid dynprof sees (from status), through /proc/<pid>/uid_map:
 * lines "<inside> <outside> <count>", where <outside> is in the reader's
 * namespace. An identity map (no user namespace) gives the uid back.
 * -ENOENT when the uid is not mapped; the reader returns the uid unchanged
 * (0) when uid_map cannot be read.
 */
int procfs_inner_uid(int pid, uid_t uid, uid_t *inner) DP_MUST_CHECK;
int procfs_parse_uid_map(const char *text, uid_t uid, uid_t *inner) DP_MUST_CHECK;
/* Its creds as its user namespace numbers them (unmapped groups dropped); -ENOENT: uid or gid unmapped. */
int procfs_inner_creds(int pid, struct proc_creds *c) DP_MUST_CHECK;

/*
 * Value of `name` in /proc/<pid>/environ (the first entry "name=..." wins,
 * as getenv). 0; -ENOENT unset; -ERANGE when the value does not fit in
 * `out` (out then holds its truncated start); -EACCES when the environ is
 * not readable (another user's process, not root); -ESRCH: no process.
 * `buf` of the parser is the raw NUL-separated block, `len` its size; a
 * last entry without a terminating NUL still counts.
 */
int procfs_environ_get(int pid, const char *name, char *out, size_t outlen) DP_MUST_CHECK;

/*
 * Several names in one read of the block (a join asks for three): each
 * want's rc as procfs_environ_get's result for it. 0, or the read's
 * negative errno (-ESRCH, -EACCES...; the wants' rc then unset).
 */
#define PROCFS_ENV_MANY_MAX 8
struct procfs_env_want {
	const char *name;
	char *out;
	size_t outlen;
	int rc;
};
int procfs_environ_get_many(int pid, struct procfs_env_want *want, int n) DP_MUST_CHECK;
int procfs_parse_environ(const char *buf, size_t len, const char *name, char *out,
			 size_t outlen) DP_MUST_CHECK;

/*
 * Field 22 of /proc/<pid>/stat (start time in clock ticks since boot):
 * with the pid, it names one process across pid reuse. -ESRCH: gone.
 * The parser also gives the state letter (field 3); fields are counted
 * after the LAST ')' since comm may hold spaces and parentheses.
 */
int procfs_start_time(int pid, unsigned long long *start) DP_MUST_CHECK;
int procfs_parse_stat(const char *text, char *state, unsigned long long *start) DP_MUST_CHECK;

/* The process's command name (comm), "?" when unreadable. */
void procfs_comm(int pid, char *out, size_t outlen);

/*
 * true when both paths name one existing file (same device and inode):
 * e.g. a path and the same path reached through /proc/<pid>/root.
 */
bool procfs_same_file(const char *a, const char *b);

/* 1 when /proc/<pid> exists and is not a zombie (state Z or X), else 0. */
int procfs_alive(int pid);

/*
 * Home folder of `uid` from passwd text (the format of /etc/passwd): the
 * first well-formed line with that uid wins; blank lines, '#' comments and
 * malformed lines (fewer than 7 fields, empty name, non-numeric uid) are
 * skipped. Trailing '/' are dropped ("/" stays "/"). -ENOENT when the uid
 * has no entry or its entry has an empty home; -ENAMETOOLONG when the home
 * does not fit in `home`.
 */
int passwd_parse_home(const char *text, uid_t uid, char *home, size_t len) DP_MUST_CHECK;

/*
 * The uid of user `name` in passwd text: the first well-formed line of
 * that name wins (as getpwnam), its uid a number. -ENOENT: none.
 */
int passwd_parse_uid(const char *text, const char *name, uid_t *uid) DP_MUST_CHECK;

/*
 * Every name passwd_parse_uid gives `uid` (the first line of each name
 * decides), as ":a:b:" into `names` (a name holds no ':'); those past
 * `len` are left out. -ENOENT: none.
 */
int passwd_parse_names(const char *text, uid_t uid, char *names, size_t len) DP_MUST_CHECK;
/* Whether `name` is one of passwd_parse_names' list. */
bool passwd_names_have(const char *names, const char *name);

/*
 * Same as passwd_parse_home, reading <root>/etc/passwd where root is e.g. "/proc/123/root".
 * The file is opened with rootfile_open_in(), so a symlinked
 * /etc/passwd resolves inside that root. -EFBIG above PROCFS_PASSWD_MAX.
 */
int passwd_home_in_root(const char *root, uid_t uid, char *home, size_t len) DP_MUST_CHECK;
/* Same, given an open fd of the root folder (O_PATH is enough). */
int passwd_home_at(int rootfd, uid_t uid, char *home, size_t len) DP_MUST_CHECK;

/*
 * An O_PATH|O_DIRECTORY fd of /proc/<pid>/root: the process's root folder,
 * whatever mount namespace it lives in. -ESRCH: gone; -EACCES: not allowed
 * (another user's process, not root).
 */
int procfs_open_root(int pid) DP_MUST_CHECK;

#endif /* DYNPROF_PROCFS_H */
