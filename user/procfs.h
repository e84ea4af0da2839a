/* SPDX-License-Identifier: MIT */
/*
 * Reading facts about a process from /proc, and the passwd file of its root.
 * Parsers of text are split from the file reading so unit tests feed them
 * strings. Functions return 0 or a negative errno.
 */
#ifndef DYNPROF_PROCFS_H
#define DYNPROF_PROCFS_H

#include <stddef.h>
#include <sys/types.h>

/* From /proc/<pid>/status: real uid and the innermost NSpid (-ESRCH: gone). */
int procfs_read_status(int pid, uid_t *uid, int *nspid_inner);
int procfs_parse_status(const char *text, uid_t *uid, int *nspid_inner);

/* Value of `name` in /proc/<pid>/environ: 0, -ENOENT unset, other -errno. */
int procfs_environ_get(int pid, const char *name, char *out, size_t outlen);
int procfs_parse_environ(const char *buf, size_t len, const char *name, char *out,
			 size_t outlen);

/* Field 22 of /proc/<pid>/stat (start time in clock ticks): identity with pid. */
int procfs_start_time(int pid, unsigned long long *start);

/* The process's command name (comm), "?" when unreadable. */
void procfs_comm(int pid, char *out, size_t outlen);

/* 1 when /proc/<pid> exists (and is not a zombie), else 0. */
int procfs_alive(int pid);

/*
 * Home folder of `uid` from passwd text (the format of /etc/passwd), with
 * trailing '/' dropped ("/" stays). -ENOENT when the uid has no entry.
 */
int passwd_parse_home(const char *text, uid_t uid, char *home, size_t len);

/* Same, reading <root>/etc/passwd where root is e.g. "/proc/123/root". */
int passwd_home_in_root(const char *root, uid_t uid, char *home, size_t len);

#endif /* DYNPROF_PROCFS_H */
