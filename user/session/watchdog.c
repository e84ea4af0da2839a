// SPDX-License-Identifier: MIT
/* dynprof's side of the watchdog (see watchdog.h): start, tell, stop. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/fdpass.h"
#include "report/report.h"
#include "session/watchdog.h"
#include "session/watchdog_impl.h"

#define WD_SEND_MS 1000 /* the child reads at once; longer means it is stuck */
#define WD_EXIT_MS 2000 /* after "done": closing its copies and exiting */

static struct {
	int chan; /* dynprof's end of the pair, -1: no watchdog */
	pid_t pid;
} wd = { .chan = -1 };

/* The watchdog cannot be told any more: say once what that costs, and go on without it. */
static void lost(const char *what, int err)
{
	report_warning("dynprof: the watchdog (pid %d) stopped answering (%s: %s): if dynprof is killed, windows stay open",
		       (int)wd.pid, what, strerror(err));
	close(wd.chan);
	wd.chan = -1;
	kill(wd.pid, SIGKILL); /* it must not act later on what it was last told */
	while (waitpid(wd.pid, NULL, __WALL) < 0 && errno == EINTR)
		;
	wd.pid = 0;
}

static int wait_for(short events)
{
	struct pollfd pfd = { .fd = wd.chan, .events = events };
	int n;

	do
		n = poll(&pfd, 1, WD_SEND_MS);
	while (n < 0 && errno == EINTR);
	return n > 0 ? 0 : n == 0 ? -ETIMEDOUT : -errno;
}

/* One message, with `fd` as SCM_RIGHTS when >= 0. 0 or a negative errno. */
static int send_msg(const struct wd_msg *m, int fd)
{
	ssize_t n;

	for (;;) {
		int rc;

		n = fdpass_send(wd.chan, m, sizeof(*m), fd, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n == (ssize_t)sizeof(*m))
			return 0;
		if (n >= 0)
			return -EIO;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			return -errno;
		rc = wait_for(POLLOUT);
		if (rc)
			return rc;
	}
}

static void tell(int op, int key, int pid, int proto, int fd)
{
	struct wd_msg m = { .op = op, .key = key, .pid = pid, .proto = proto };
	int rc;

	if (wd.chan < 0 || key < 0)
		return;
	rc = send_msg(&m, fd);
	if (rc)
		lost("telling it", -rc);
}

void watchdog_hold(int fd, int pid, enum proto_version proto)
{
	tell(WD_HOLD, fd, pid, proto, fd);
}

void watchdog_window(int fd, bool open)
{
	tell(open ? WD_OPEN : WD_CLOSED, fd, 0, 0, -1);
}

void watchdog_release(int fd)
{
	struct wd_msg ack;
	ssize_t n;
	int rc;

	tell(WD_RELEASE, fd, 0, 0, -1);
	if (wd.chan < 0 || fd < 0)
		return;
	/* Its copy closed before ours: the server sees the end when dynprof closes. */
	for (;;) {
		rc = wait_for(POLLIN);
		if (rc) {
			lost("waiting for its answer", -rc);
			return;
		}
		n = recv(wd.chan, &ack, sizeof(ack), MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n == (ssize_t)sizeof(ack) && ack.op == WD_RELEASE && ack.key == fd)
			return;
		lost("reading its answer", n < 0 ? errno : EPROTO);
		return;
	}
}

void watchdog_done(void)
{
	struct pollfd pfd;

	tell(WD_DONE, 0, 0, 0, -1);
	if (wd.chan < 0)
		return;
	/* It exits at once: its end of the pair closing says so. */
	pfd = (struct pollfd){ .fd = wd.chan, .events = POLLIN };
	while (poll(&pfd, 1, WD_EXIT_MS) < 0 && errno == EINTR)
		;
	close(wd.chan);
	wd.chan = -1;
	if (waitpid(wd.pid, NULL, __WALL | WNOHANG) == 0) {
		kill(wd.pid, SIGKILL);
		while (waitpid(wd.pid, NULL, __WALL) < 0 && errno == EINTR)
			;
	}
	wd.pid = 0;
}

int watchdog_pid(void)
{
	return wd.chan >= 0 ? (int)wd.pid : 0;
}

void watchdog_start(int timeout_ms)
{
	pid_t parent = getpid(), child;
	int pair[2];

	if (wd.chan >= 0)
		return;
	/* CLOEXEC: a launched application must not hold dynprof's end (its death would go unseen). */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0) {
		report_warning("dynprof: no watchdog (socketpair: %s): if dynprof is killed, windows stay open",
			       strerror(errno));
		return;
	}
	/*
	 * A clone without exit signal, as ns/netns_socket.c's helper: a
	 * SIGCHLD would reach the user's rules and launch mode's wait. When
	 * dynprof dies the kernel reparents it with SIGCHLD, so init reaps it.
	 * The child runs only syscalls (no atfork handlers needed).
	 */
	child = (pid_t)syscall(SYS_clone, 0UL, NULL, NULL, NULL, NULL);
	if (child < 0) {
		report_warning("dynprof: no watchdog (clone: %s): if dynprof is killed, windows stay open",
			       strerror(errno));
		close(pair[0]);
		close(pair[1]);
		return;
	}
	if (child == 0) {
		close(pair[0]);
		watchdog_child_main(pair[1], parent, timeout_ms);
	}
	close(pair[1]);
	wd.chan = pair[0];
	wd.pid = child;
}
