// SPDX-License-Identifier: MIT
/* A card holder's socket state, read without connecting (see sockstate.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc/fdscan.h"
#include "proc/netunix.h"
#include "proc/sockstate.h"
#include "proc/socklocate.h"

struct owned {
	const struct netunix_match *m;
	int listening, connected;
};

static int in_set(const unsigned long *set, int n, unsigned long inode)
{
	for (int i = 0; i < n; i++)
		if (set[i] == inode)
			return 1;
	return 0;
}

static int owned_fd(void *ctx, int fddir, const char *name, int fd, const char *target)
{
	struct owned *o = ctx;
	unsigned long inode = fdscan_socket_inode(target);

	(void)fddir;
	(void)name;
	(void)fd;
	if (!inode)
		return 0;
	o->listening |= in_set(o->m->listening, o->m->nlistening, inode);
	o->connected |= in_set(o->m->connected, o->m->nconnected, inode);
	return 0;
}

/* Which of the rows bound to `path` the process's own fds hold. */
static int classify(int pid, const char *path, enum pm_socket_state *state)
{
	struct netunix_match m;
	struct owned o = { .m = &m };
	char dir[32];
	int err, piddir;

	snprintf(dir, sizeof(dir), "/proc/%d", pid);
	piddir = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (piddir < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	err = netunix_find(piddir, path, &m);
	if (!err && m.nlistening)
		err = fdscan(piddir, owned_fd, &o);
	close(piddir);
	if (err)
		return err;
	if (!o.listening)
		*state = PM_SOCKET_NONE;
	else
		*state = o.connected ? PM_SOCKET_BUSY : PM_SOCKET_LISTENING;
	return 0;
}

int sockstate_read(int pid, struct sockstate *out)
{
	/* ~13 KiB: off the stack, which listeners' callers may keep small. */
	struct sock_location *ts = malloc(sizeof(*ts));
	int err;

	memset(out, 0, sizeof(*out));
	out->state = PM_SOCKET_NONE;
	if (!ts)
		return -ENOMEM;
	err = socklocate_find(pid, ts);
	if (err == -ESRCH || err == -ENOMEM) {
		free(ts);
		return err;
	}
	snprintf(out->home, sizeof(out->home), "%s", ts->home);
	if (err == 0) {
		err = classify(pid, ts->path, &out->state);
		if (!err && out->state != PM_SOCKET_NONE) {
			snprintf(out->path, sizeof(out->path), "%s", ts->path);
			snprintf(out->host_path, sizeof(out->host_path), "%s", ts->host_path);
		}
	} else {
		err = 0; /* no file (ENOENT, ELOOP, ENOTSOCK) or not allowed to look: NONE */
	}
	free(ts);
	return err;
}
