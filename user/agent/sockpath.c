// SPDX-License-Identifier: MIT
/* The listening socket and its path (see sockpath.h). */
#include <errno.h>
#include <stddef.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dynprof/proto.h"
#include "agent/sockpath.h"

#define LISTEN_BACKLOG 8

/* The passwd home of the real uid, trailing '/' dropped: CANN ignores $HOME. */
static int home_dir(char *out, size_t len)
{
	struct passwd pw, *res = NULL;
	char buf[4096];
	size_t n;

	if (getpwuid_r(getuid(), &pw, buf, sizeof(buf), &res) != 0 || !res || !pw.pw_dir)
		return -ENOENT;
	n = strlen(pw.pw_dir);
	while (n > 1 && pw.pw_dir[n - 1] == '/')
		n--;
	if (n == 1 && pw.pw_dir[0] == '/')
		n = 0; /* home "/" gives "/dynamic_profiling_socket_<key>" */
	if (n + 1 > len)
		return -ENAMETOOLONG;
	memcpy(out, pw.pw_dir, n);
	out[n] = '\0';
	return 0;
}

static int bind_path(struct agent_socket *s)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct stat st;

	memcpy(addr.sun_path, s->path, sizeof(s->path));
	/* CANN takes the path over from whoever had it. */
	if (unlink(s->path) < 0 && errno != ENOENT)
		return -errno;
	if (bind(s->fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		return -errno;
	if (chmod(s->path, 0600) < 0 || lstat(s->path, &st) < 0) {
		int rc = -errno;

		unlink(s->path);
		return rc;
	}
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	return 0;
}

static int open_at_key(struct agent_socket *s, const char *home, const char *key)
{
	int n = snprintf(s->path, sizeof(s->path), "%s/%s%s", home, DYNPROF_SOCKET_PREFIX, key);
	int rc;

	if (n < 0 || (size_t)n >= sizeof(s->path))
		return -ENAMETOOLONG;
	s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s->fd < 0)
		return -errno;
	rc = bind_path(s);
	if (!rc && listen(s->fd, LISTEN_BACKLOG) < 0) {
		rc = -errno;
		unlink(s->path);
	}
	if (rc) {
		close(s->fd);
		s->fd = -1;
	}
	return rc;
}

/* \0dyn_prof_sock_<key>: addrlen counts the leading NUL, not a trailing one. */
static int open_abstract(struct agent_socket *s, const char *key)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int n = snprintf(addr.sun_path + 1, sizeof(addr.sun_path) - 1, "%s%s",
			 DYNPROF_SOCKET_PREFIX_ALT, key);
	int rc = 0;

	if (n < 0 || (size_t)n >= sizeof(addr.sun_path) - 1)
		return -ENAMETOOLONG;
	snprintf(s->path, sizeof(s->path), "@%s", addr.sun_path + 1);
	s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s->fd < 0)
		return -errno;
	if (bind(s->fd, (struct sockaddr *)&addr,
		 (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n)) < 0 ||
	    listen(s->fd, LISTEN_BACKLOG) < 0)
		rc = -errno;
	if (rc) {
		close(s->fd);
		s->fd = -1;
	}
	return rc;
}

int agent_socket_open(struct agent_socket *s, const char *key, int abstract)
{
	char home[sizeof(s->path)], pid[16];
	int rc;

	s->fd = -1;
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	s->abstract = abstract;
	if (abstract) {
		rc = open_abstract(s, key && *key ? key : pid);
		if (rc == -EADDRINUSE && key && *key && strcmp(key, pid))
			rc = open_abstract(s, pid);
		return rc;
	}
	rc = home_dir(home, sizeof(home));
	if (rc)
		return rc;
	/* The key's raw text, as CANN: "0777" names ..._0777. */
	rc = open_at_key(s, home, key && *key ? key : pid);
	if (rc == -EADDRINUSE && key && *key && strcmp(key, pid))
		rc = open_at_key(s, home, pid);
	return rc;
}

void agent_socket_close(struct agent_socket *s)
{
	struct stat st;

	if (s->fd < 0)
		return;
	close(s->fd);
	s->fd = -1;
	if (s->abstract)
		return; /* the name goes with the socket */
	/* Another process with our key may have taken the path over since. */
	if (lstat(s->path, &st) == 0 && st.st_dev == s->dev && st.st_ino == s->ino)
		unlink(s->path);
}
