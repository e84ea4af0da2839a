/* SPDX-License-Identifier: MIT */
/*
 * The state of a card holder's dynamic-profiling socket, and whether a
 * located socket is the target's own, read without connecting to it.
 *
 * The socket is found as attach finds it (socklocate_find: the process's
 * key, its home in its own root, both file names, else its abstract name).
 * Then, among the process's own fds ("socket:[INODE]"), the sockets whose
 * address is the socket's path as the process sees it ("@<name>" for an
 * abstract one), as sock_diag (sockdiag.h) in the process's netns names
 * them (sockowned.c; /proc/<pid>/net/unix, every socket of the netns, is
 * read only without sock_diag):
 *
 *   LISTENING  the process holds a listening row (__SO_ACCEPTCON, St 01)
 *              and, for a file, that listener is bound to the very file
 *              now at the path (UNIX_DIAG_VFS against a stat);
 *   BUSY       and it also holds an accepted row (St 03) whose client is
 *              still there (UNIX_DIAG_PEER not 0, not shut down both
 *              ways): CANN serves one client at a time and never closes a
 *              finished client's socket, so stale accepted rows pile up
 *              and do not count; or a client in another network
 *              namespace holds it (the host's or another container's for
 *              a container's server: the kernel puts the accepted socket
 *              in the client's netns, where the target's rows do not show
 *              it), found among the target's fds (sockheld.h);
 *   NONE       otherwise: no socket, one that cannot be looked at, or one
 *              the process holds no listener for (not listening yet, left
 *              by an earlier process with the same key, or taken over by
 *              another process: the file is another listener's).
 *
 * Without sock_diag (no unix_diag in the kernel) every accepted row counts
 * as a client and the file is not compared: the behaviour before sock_diag,
 * said once on stderr.
 *
 * A client still queued on the listener (St 02, not accepted) is not owned
 * by anyone yet and does not count.
 */
#ifndef DYNPROF_SOCKSTATE_H
#define DYNPROF_SOCKSTATE_H

#include <limits.h>
#include <sys/stat.h>

#include "sock/netunix.h"
#include "sock/sockdiag.h"
#include "sock/socklocate.h"
#include "shared/compiler.h"

/*
 * A socket's state is read without connecting (a CANN server has one
 * client slot; taking it to look would disturb a session), from
 * /proc/<pid>/net/unix and the process's own fds: see sockstate.c.
 */
enum pm_socket_state {
	PM_SOCKET_NONE,      /* no socket the process listens on: no file, or a file
				it does not serve (not listening yet, left by an
				earlier process, taken over by another one) */
	PM_SOCKET_LISTENING, /* the process listens on it, no client connected */
	PM_SOCKET_BUSY,      /* the process listens on it and a client is connected now
				(a finished client's connection, which CANN keeps
				open, does not count: see sockstate.h) */
};

struct sockstate {
	enum pm_socket_state state;
	enum sock_flavour flavour; /* meaningful unless NONE */
	char home[PATH_MAX];       /* as the process sees it, "" not resolved */
	char path[PATH_MAX];       /* as the process sees it ("@<name>" abstract); "" when NONE */
	char host_path[PATH_MAX];  /* as dynprof reaches it; "" when NONE */
};

/*
 * Find and classify the socket of `pid`. 0 with *out filled (state NONE
 * included); -ESRCH: the process is gone; other negative errno when its
 * socket table or fds could not be read (state then unknown).
 */
int sockstate_read(int pid, struct sockstate *out) DP_MUST_CHECK;
/*
 * Where this thread's last sockstate_read found a socket LISTENING, if it
 * was of `pid` (its start_time that one, 0: not checked) at most max_age_ms
 * ago: 0 with *out filled, else -ENOENT. A join that follows the model's
 * look at once takes it instead of locating the socket again (a fifth of a
 * join's own time was that second look).
 */
int sockstate_last_listener(int pid, unsigned long long start_time, int max_age_ms,
			    struct sock_location *out) DP_MUST_CHECK;

/* The sockets bound to one path (as net/unix shows it) that a process holds. */
struct sock_owned {
	unsigned long listener;                      /* its listening socket on the path, 0 none */
	unsigned long connected[NETUNIX_MAX_INODES]; /* its accepted sockets on it */
	int nconnected;
	bool listener_known;              /* listener_rec is sock_diag's record of it */
	struct sockdiag_rec listener_rec; /* (its bound file's numbers: UNIX_DIAG_VFS) */
};

/*
 * The listener on `path` that the process holds (the connection needs no
 * more: connected is left empty). 0, -ESRCH (gone), other negative errno.
 */
int sockstate_owned(int pid, const char *path, struct sock_owned *out) DP_MUST_CHECK;

/* Whose a socket file is, proven without connecting to it. */
enum sock_verdict {
	SOCK_OURS,   /* the target's listener is bound to this file */
	SOCK_TAKEN,  /* the file is another listener's: owner says whose */
	SOCK_NOBODY, /* the target holds no listener on the path, and no
			 listener of its netns is bound to the file (stale) */
	SOCK_UNSURE, /* cannot tell (no sock_diag, or numbers that match no
			 listener): connect, then check the peer */
};

struct sock_owner {
	unsigned long inode; /* the other listener */
	int pid;             /* a process holding it, 0 not found */
	uid_t uid;
	char comm[64];
};

/*
 * Is the file `st` (a fresh fstatat of the socket file, no symlink
 * followed), bound in the target's view at `inside_path`, the target's own
 * listener? *owner is filled for SOCK_TAKEN.
 */
enum sock_verdict sockstate_check_file(const struct sock_location *ts, const char *inside_path,
				       const struct stat *st, struct sock_owner *owner);

#endif /* DYNPROF_SOCKSTATE_H */
