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
 */
#ifndef DYNPROF_TARGET_SOCKET_H
#define DYNPROF_TARGET_SOCKET_H

#include <limits.h>
#include <sys/types.h>

struct target_socket {
	int pid;               /* host pid (as dynprof sees it) */
	uid_t uid;             /* the target's real uid */
	int key;               /* socket key: env value, else innermost NSpid */
	char home[PATH_MAX];   /* home as the target sees it */
	char name[128];        /* socket file name, e.g. dynamic_profiling_socket_42 */
	char path[PATH_MAX];   /* as the target sees it: <home>/<name> */
	char host_path[PATH_MAX]; /* as dynprof reaches it: /proc/<pid>/root<home>/<name> */
};

/*
 * Locate the socket of `pid`. Returns 0; -ESRCH when no such process;
 * -ENOENT when it has no socket (out->name then holds the expected name);
 * -EACCES when its files cannot be read; other negative errno.
 */
int target_socket_find(int pid, struct target_socket *out);

/*
 * Connect to a found socket, non-blocking, and check SO_PEERCRED. Returns
 * the connected fd (O_NONBLOCK, O_CLOEXEC); -EPERM when the peer is not the
 * target (why[] names the path and the real owner: pid, comm, uid);
 * -ECONNREFUSED when nobody listens; other negative errno (why[] says).
 */
int target_socket_connect(const struct target_socket *ts, char *why, size_t whylen);

#endif /* DYNPROF_TARGET_SOCKET_H */
