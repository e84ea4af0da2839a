/* SPDX-License-Identifier: MIT */
/*
 * Where the server listens, and making the listening socket, as CANN does:
 * <home>/dynamic_profiling_socket_<key>, home from the passwd entry of the
 * real uid (not $HOME), key DYNAMIC_PROFILING_KEY_PID or the pid, any old
 * file at the path unlinked first, mode 0600. Or, as CANN 8.5.0, the
 * abstract name \0dyn_prof_sock_<key>, bound with its exact length (the
 * leading NUL counted, no trailing one).
 */
#ifndef DYNPROF_AGENT_SOCKPATH_H
#define DYNPROF_AGENT_SOCKPATH_H

#include <sys/types.h>
#include <sys/un.h>

#include "shared/compiler.h"

struct agent_socket {
	int fd;                                                 /* listening, CLOEXEC */
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)]; /* "@name" when abstract */
	int abstract;
	dev_t dev; /* the socket file we bound, */
	ino_t ino; /* to unlink only our own */
};

/*
 * Bind and listen on the path (abstract: the name) for `key` (the raw
 * text of a positive DYNAMIC_PROFILING_KEY_PID, used as written: "0777"
 * names ..._0777), falling back to the pid when it is in use (EADDRINUSE:
 * only the abstract name can be, the file is unlinked first); NULL or ""
 * means the pid. Returns 0 or a negative errno (-ENAMETOOLONG when the
 * path does not fit sun_path).
 */
int agent_socket_open(struct agent_socket *s, const char *key, int abstract) DP_MUST_CHECK;

/* Close, and unlink the path if it is still the file we bound (abstract: close). */
void agent_socket_close(struct agent_socket *s);

#endif /* DYNPROF_AGENT_SOCKPATH_H */
