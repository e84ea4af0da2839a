/* SPDX-License-Identifier: MIT */
/*
 * Locating a target's dynamic-profiling socket, without connecting to it.
 *
 * The socket is looked up the way the target itself made it, not the way
 * msprof guesses it: the target's uid (status), its home in the passwd file
 * of its own root (/proc/<pid>/root/etc/passwd), its key
 * (DYNAMIC_PROFILING_KEY_PID in its environ, else its innermost NSpid), both
 * file names. The path is reached through /proc/<pid>/root, so a root
 * dynprof on the host reaches a process inside a container; the home is
 * resolved inside that root (symlinks cannot leave it), the socket file
 * itself must be a socket, not a symlink.
 *
 * This is the process model's view (sockstate.c reads the state of what it
 * finds) as much as attach's: connecting and trusting the peer are
 * session/target_socket.h's.
 *
 * The struct is plain data (no fd inside, copy it freely).
 */
#ifndef DYNPROF_SOCKLOCATE_H
#define DYNPROF_SOCKLOCATE_H

#include <limits.h>
#include <sys/types.h>
#include "shared/compiler.h"

#define SOCKLOCATE_NAME_MAX 128 /* a socket file name: prefix and key */
#define SOCKLOCATE_KEY_MAX 24   /* a key's text, as it appears in the name */

/*
 * The three ways a CANN server listens (docs/PROTOCOL.md Part 2 section 1):
 *  FILE      <home>/dynamic_profiling_socket_<key>: v1 (CANN <= 8.3) and
 *            9.0.0-beta.2 onwards;
 *  FILE_ALT  <home>/dyn_prof_sock_<key>: untagged master builds of
 *            February-March 2026;
 *  ABSTRACT  \0dyn_prof_sock_<key> ("@..." in /proc/net/unix): 8.5.0 and
 *            9.0.0-beta.1; bound to the target's network namespace.
 */
enum sock_flavour {
	SOCK_FLAVOUR_FILE = 0,
	SOCK_FLAVOUR_FILE_ALT,
	SOCK_FLAVOUR_ABSTRACT,
};

#define SOCKLOCATE_NAMES_MAX 256

struct sock_location {
	int pid;                       /* host pid (as dynprof sees it) */
	uid_t uid;                     /* the target's real uid, as dynprof sees it */
	uid_t inner_uid;               /* the same as the target sees it in its user
				  namespace (rootless containers); its passwd is
				  searched for this one */
	int nspid;                     /* innermost NSpid: its pid in its own namespace */
	unsigned long long start_time; /* /proc/<pid>/stat field 22: pid reuse guard */
	int key; /* socket key: env value, else innermost NSpid (0: not a plain number) */
	char key_text[SOCKLOCATE_KEY_MAX]; /* the key as the name spells it: CANN keeps the
					      env text as given ("0777") */
	char home[PATH_MAX];               /* home as the target sees it */
	/* ":a:b:" the names its own passwd gives inner_uid (user=NAME), "" unknown */
	char user_names[SOCKLOCATE_NAMES_MAX];
	enum sock_flavour flavour;      /* which of the three the found socket is */
	char name[SOCKLOCATE_NAME_MAX]; /* socket file name, e.g. dynamic_profiling_socket_42 */
	char path[PATH_MAX];            /* as the target sees it: <home>/<name> */
	char host_path[PATH_MAX];       /* as dynprof reaches it: /proc/<pid>/root<home>/<name>;
				     ABSTRACT: path and host_path are "@<name>" */
	unsigned long listen_ino;       /* ABSTRACT: the listening socket's inode, which the
				     target held when found; 0 for the file flavours */
	/*
	 * A file's device and inode when sockstate_read found it bound to the
	 * target's own listener (0: not checked): a connect that finds the
	 * same file there need not ask whose it is again (the bind of another
	 * socket makes another file).
	 */
	unsigned long long file_dev, file_ino;
	char why[512]; /* after a failed find: a short human reason */
};

/*
 * Locate the socket of `pid`. Key candidates, in order, duplicates skipped:
 * DYNAMIC_PROFILING_KEY_PID when stoi reads it as > 0 (its raw text, as CANN), then the
 * innermost NSpid (CANN falls back to its own pid when the key's path is
 * taken; v1 always uses its pid). For each key, the names
 * dynamic_profiling_socket_<key> then dyn_prof_sock_<key>. The first
 * candidate that exists in the home as a socket (lstat, no symlink
 * followed) wins. When none does, a listening abstract socket
 * @dyn_prof_sock_<any key> in the target's netns (/proc/<pid>/net/unix)
 * that one of the target's fds holds (CANN 8.5.0): flavour ABSTRACT, the
 * key as the row names it (it may be msprof's pid). Returns 0 with every
 * field filled, or:
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
int socklocate_find(int pid, struct sock_location *out) DP_MUST_CHECK;
/*
 * For this thread from now on, a caller that may not wait on a target (the
 * follow and launch loop's tracker): a home that only the target's helper
 * can read (its own filesystem) and that is not known yet is read beside
 * it; socklocate_find gives -EINPROGRESS until it is (ask again).
 */
void socklocate_no_wait(bool on);

/*
 * The candidate names of a located socket in find's order (key, then
 * innermost NSpid; each with both prefixes), at most max. Returns how many.
 */
int socklocate_names(const struct sock_location *ts, char names[][SOCKLOCATE_NAME_MAX], int max);

#endif /* DYNPROF_SOCKLOCATE_H */
