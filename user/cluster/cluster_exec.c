// SPDX-License-Identifier: MIT
/* Commands for a whole cluster job (see cluster_exec.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cluster/cluster_exec.h"
#include "shared/clock.h"

/* In the child: default signals, nothing blocked (dynprof blocks the console's). */
static void child_signals(void)
{
	sigset_t none;

	sigemptyset(&none);
	signal(SIGPIPE, SIG_DFL);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

static void close_pair(int p[2])
{
	if (p[0] >= 0)
		close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
}

int cluster_spawn(char *const argv[], bool merge_err, struct cluster_child *c)
{
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, err[2] = { -1, -1 }, e;
	pid_t pid;

	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || (!merge_err && pipe2(err, O_CLOEXEC)))
		goto failed;
	pid = fork();
	if (pid < 0)
		goto failed;
	if (pid == 0) {
		setpgid(0, 0);
		child_signals();
		dup2(in[0], STDIN_FILENO);
		dup2(out[1], STDOUT_FILENO);
		dup2(merge_err ? out[1] : err[1], STDERR_FILENO);
		execvp(argv[0], argv);
		_exit(127);
	}
	setpgid(pid, pid); /* also here: a signal sent at once must find the group */
	close(in[0]);
	close(out[1]);
	if (err[1] >= 0)
		close(err[1]);
	*c = (struct cluster_child){ pid, in[1], out[0], err[0] };
	return 0;
failed:
	e = -errno;
	close_pair(in);
	close_pair(out);
	close_pair(err);
	return e;
}

static int status_of(int st)
{
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Read one readable pipe into its buffer (what does not fit is read and dropped). */
static void read_some(int *fd, char *buf, size_t len, size_t *used)
{
	char scratch[4096], *dst = scratch;
	size_t room = sizeof(scratch);
	ssize_t n;

	if (buf && *used + 1 < len) {
		dst = buf + *used;
		room = len - 1 - *used;
	}
	n = read(*fd, dst, room);
	if (n < 0 && errno == EINTR)
		return;
	if (n <= 0) {
		close(*fd);
		*fd = -1;
	} else if (dst != scratch) {
		*used += (size_t)n;
		buf[*used] = '\0';
	}
}

/* Read both pipes until both end or the deadline passes. */
static void drain(int fds[2], char *bufs[2], const size_t lens[2], int64_t deadline)
{
	size_t used[2] = { 0, 0 };

	while (fds[0] >= 0 || fds[1] >= 0) {
		struct pollfd p[2] = { { fds[0], POLLIN, 0 }, { fds[1], POLLIN, 0 } };

		if (poll(p, 2, clock_ms_left(deadline)) <= 0)
			break;
		for (int i = 0; i < 2; i++)
			if (p[i].revents)
				read_some(&fds[i], bufs[i], lens[i], &used[i]);
	}
}

int cluster_capture(char *const argv[], char *buf, size_t len, char *err, size_t errlen, int timeout_ms)
{
	struct cluster_child c;
	int64_t deadline = clock_ms() + timeout_ms;
	char *bufs[2] = { buf, err };
	size_t lens[2] = { len, err ? errlen : 0 };
	int fds[2], st, rc;

	if (len)
		buf[0] = '\0';
	if (err && errlen)
		err[0] = '\0';
	rc = cluster_spawn(argv, false, &c);
	if (rc)
		return rc;
	close(c.in);
	fds[0] = c.out;
	fds[1] = c.err;
	drain(fds, bufs, lens, deadline);
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0) { /* the deadline passed */
			close(fds[i]);
			kill(-c.pid, SIGKILL);
		}
	while (waitpid(c.pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return status_of(st);
}
