// SPDX-License-Identifier: MIT
/* A socket made inside a target's network namespace (see netns_socket.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/fdpass.h"
#include "ns/netns_socket.h"

#define HELPER_WAIT_MS 2000 /* a fork, two setns and a socket: well under this */

static int open_ns(int pid, const char *name)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/ns/%s", pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	if (errno == ENOENT)
		return -ESRCH;
	return errno == EPERM ? -EACCES : -errno;
}

int netns_open(int pid, struct netns *ns)
{
	struct stat mine, theirs;

	ns->fd = ns->userns_fd = -1;
	ns->fd = open_ns(pid, "net");
	if (ns->fd < 0)
		return ns->fd;
	if (fstat(ns->fd, &theirs) < 0 || stat("/proc/self/ns/net", &mine) < 0) {
		int err = -errno;

		netns_close(ns);
		return err;
	}
	ns->dev = theirs.st_dev;
	ns->ino = theirs.st_ino;
	ns->ours = mine.st_dev == theirs.st_dev && mine.st_ino == theirs.st_ino;
	if (!ns->ours) {
		int u = open_ns(pid, "user");

		ns->userns_fd = u >= 0 ? u : -1;
	}
	return 0;
}

void netns_close(struct netns *ns)
{
	if (ns->fd >= 0)
		close(ns->fd);
	if (ns->userns_fd >= 0)
		close(ns->userns_fd);
	ns->fd = ns->userns_fd = -1;
}

/* ---- the helper: a child that works in the target's namespace ------------ */

/* What the helper does once inside: make one fd (or a negative errno). */
typedef int (*helper_step)(void *arg);

struct socket_args {
	int domain, type, protocol;
};

static int make_socket(void *arg)
{
	const struct socket_args *a = arg;
	int fd = socket(a->domain, a->type | SOCK_CLOEXEC, a->protocol);

	return fd < 0 ? -errno : fd;
}

/* Child side: send the fd, or the errno as 4 bytes without one. Only syscalls. */
static void send_result(int chan, int result)
{
	int32_t word = result < 0 ? result : 0;

	while (fdpass_send(chan, &word, sizeof(word), result, MSG_NOSIGNAL) < 0 && errno == EINTR)
		;
}

/* Child: join (the user namespace if needed, then) the netns, run the step. */
static void helper_child(const struct netns *ns, int chan, helper_step step, void *arg)
{
	int result;

	if (setns(ns->fd, CLONE_NEWNET) < 0) {
		result = -errno;
		/* A rootless container: its owner has CAP_SYS_ADMIN in its user ns. */
		if ((result == -EPERM || result == -EINVAL) && ns->userns_fd >= 0 &&
		    setns(ns->userns_fd, CLONE_NEWUSER) == 0 && setns(ns->fd, CLONE_NEWNET) == 0)
			result = 0;
		if (result) {
			send_result(chan, result);
			_exit(0);
		}
	}
	send_result(chan, step(arg));
	_exit(0);
}

/* Parent: the child's answer, within the deadline. */
static int receive_result(int chan)
{
	int32_t word = -EIO;
	struct pollfd pfd = { .fd = chan, .events = POLLIN };
	ssize_t n;
	int fd, rc;

	do
		rc = poll(&pfd, 1, HELPER_WAIT_MS);
	while (rc < 0 && errno == EINTR);
	if (rc <= 0)
		return rc == 0 ? -ETIMEDOUT : -errno;
	do
		n = fdpass_recv(chan, &word, sizeof(word), 0, &fd);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n != sizeof(word) || word < 0) {
		if (fd >= 0)
			close(fd);
		return n != sizeof(word) ? -EIO : word;
	}
	return fd >= 0 ? fd : -EIO;
}

/* Run `step` in a forked child inside `ns`; its fd comes back. */
static int helper_run(const struct netns *ns, helper_step step, void *arg)
{
	int chan[2], fd, status;
	pid_t child;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, chan) < 0)
		return -errno;
	/*
	 * A fork without an exit signal: a SIGCHLD would reach the user's
	 * rules (--window=...signal:CHLD) and launch mode's application wait.
	 * The child runs only syscalls, so skipping fork()'s atfork handlers
	 * is safe.
	 */
	child = (pid_t)syscall(SYS_clone, 0UL, NULL, NULL, NULL, NULL);
	if (child < 0) {
		fd = -errno;
		close(chan[0]);
		close(chan[1]);
		return fd;
	}
	if (child == 0) {
		close(chan[0]);
		helper_child(ns, chan[1], step, arg);
	}
	close(chan[1]);
	fd = receive_result(chan[0]);
	close(chan[0]);
	if (fd == -ETIMEDOUT)
		kill(child, SIGKILL);
	while (waitpid(child, &status, __WALL) < 0 && errno == EINTR)
		;
	return fd;
}

int netns_socket(const struct netns *ns, int domain, int type, int protocol)
{
	struct socket_args a = { domain, type, protocol };

	if (ns->ours)
		return make_socket(&a);
	return helper_run(ns, make_socket, &a);
}

int netns_socket_of(int pid, int domain, int type, int protocol)
{
	struct netns ns;
	int fd = netns_open(pid, &ns);

	if (fd < 0)
		return fd;
	fd = netns_socket(&ns, domain, type, protocol);
	netns_close(&ns);
	return fd;
}
