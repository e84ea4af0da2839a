/* SPDX-License-Identifier: MIT */
/*
 * Finding and trusting a target's dynamic-profiling socket.
 *
 * The socket is looked up the way the target itself made it, not the way
 * msprof guesses it: the target's uid (status), its home in the passwd file
 * of its own root (/proc/<pid>/root/etc/passwd), its key
 * (DYNAMIC_PROFILING_KEY_PID in its environ, else its innermost NSpid), both
 * file names. The path is reached through /proc/<pid>/root, so a root
 * dynprof on the host reaches a process inside a container; the home is
 * resolved inside that root (symlinks cannot leave it), the socket file
 * itself must be a socket, not a symlink; connecting goes through an O_PATH
 * fd of the home, so sun_path's 108 bytes never limit the path. After
 * connect, SO_PEERCRED must name the target's process, else nothing is sent.
 *
 * The struct is plain data (no fd inside, copy it freely): connect opens
 * the root and the home again and re-checks everything it relies on.
 *
 * Errors: convention 2 of docs/ERRORS.md: a negative errno with a short
 * reason (`why` of the struct for find, the caller's buffer for connect).
 */
#ifndef DYNPROF_TARGET_SOCKET_H
#define DYNPROF_TARGET_SOCKET_H

#include <limits.h>
#include <sys/types.h>

#include "shared/compiler.h"

struct target_socket {
	int pid;               /* host pid (as dynprof sees it) */
	uid_t uid;             /* the target's real uid, as dynprof sees it */
	uid_t inner_uid;       /* the same as the target sees it in its user
				  namespace (rootless containers); its passwd is
				  searched for this one */
	int nspid;             /* innermost NSpid: its pid in its own namespace */
	unsigned long long start_time; /* /proc/<pid>/stat field 22: pid reuse guard */
	int key;               /* socket key: env value, else innermost NSpid */
	char home[PATH_MAX];   /* home as the target sees it */
	char name[128];        /* socket file name, e.g. dynamic_profiling_socket_42 */
	char path[PATH_MAX];   /* as the target sees it: <home>/<name> */
	char host_path[PATH_MAX]; /* as dynprof reaches it: /proc/<pid>/root<home>/<name> */
	char why[512];         /* after a failed find: a short human reason */
};

/*
 * Locate the socket of `pid`. Key candidates, in order, duplicates skipped:
 * DYNAMIC_PROFILING_KEY_PID when a positive decimal integer, then the
 * innermost NSpid (CANN falls back to its own pid when the key's path is
 * taken; v1 always uses its pid). For each key, the names
 * dynamic_profiling_socket_<key> then dyn_prof_sock_<key>. The first
 * candidate that exists in the home as a socket (lstat, no symlink
 * followed) wins. Returns 0 with every field filled, or:
 *  -ESRCH   no such process (or it exited / its pid was reused during the look-up);
 *  -ENOENT  no candidate exists, or the uid has no home in the target's
 *           passwd (home[] empty then), or the home folder is missing;
 *           name/path/host_path then hold the first expected name;
 *  -ELOOP   no socket, but a candidate name is a symlink (never followed);
 *  -ENOTSOCK no socket, but a candidate name is another kind of file;
 *           (for both: name/path/host_path name that file)
 *  -EACCES  its environ, root, passwd or home cannot be read (not root,
 *           another user's process);
 *  other negative errno. `why` says which, in every failure.
 */
int target_socket_find(int pid, struct target_socket *out) DP_MUST_CHECK;

/*
 * Connect to a found socket, non-blocking, and check SO_PEERCRED. When the
 * found name is served by another process or by nobody (-EPERM,
 * -ECONNREFUSED), the other candidate names that exist as sockets are tried
 * in find's order: with a shared DYNAMIC_PROFILING_KEY_PID the last process
 * to start takes the key's path, and CANN falls back to its own pid when
 * that path is busy. The first failure is the one returned. Returns
 * the connected fd (O_NONBLOCK, O_CLOEXEC) or a negative errno, with a
 * short reason in why[] (may be NULL) for every failure:
 *  -EPERM        the peer is not the target (why names the path and the
 *                real owner: pid, comm, uid), or the pid now belongs to
 *                another process than the one found;
 *  -ECONNREFUSED nobody listens (a stale socket file; the target may have
 *                exited without unlinking it);
 *  -ENOENT       the target exited, or its home or socket file vanished;
 *  -ELOOP / -ENOTSOCK  the name is no longer a socket;
 *  -EAGAIN       the listen backlog stayed full for about 1 s;
 *  other negative errno.
 */
int target_socket_connect(const struct target_socket *ts, char *why, size_t whylen) DP_MUST_CHECK;

#endif /* DYNPROF_TARGET_SOCKET_H */
