// SPDX-License-Identifier: MIT
/* --remote=PATH CMD... (see remote_client.h). */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli/console.h"
#include "cli/remote_client.h"
#include "control/control.h"
#include "report/escape.h"
#include "report/report.h"
#include "shared/clock.h"

#define EXIT_ACK 0
#define EXIT_REFUSED 1
#define EXIT_UNREACHED 2

/*
 * The longest line a monitor sends: control.c queues at most twice its
 * CONTROL_SNDBUF (4 MiB) for a client and drops one whose line does not
 * fit. A longer line is not dynprof's: the connection ends there.
 */
#define REPLY_LINE_MAX (16u << 20)

struct reader {
	char *buf;
	size_t len, cap;
	bool streaming; /* `events`: no deadline, lines go on after the ack */
	bool acked;
};

/* The command words joined by spaces; -1 (printed) when too long for one control line. */
static int command_line(char *const *words, char *line, size_t len)
{
	size_t used = 0;

	line[0] = '\0';
	for (int i = 0; words[i]; i++) {
		int n = snprintf(line + used, len - used, "%s%s", i ? " " : "", words[i]);

		if (n < 0 || (size_t)n >= len - used) {
			report_error("Argument --remote: the command is longer than %d bytes.",
				     CONTROL_LINE_MAX - 1);
			return -1;
		}
		used += (size_t)n;
	}
	if (strchr(line, '\n')) {
		report_error("Argument --remote: the command holds a newline (one command per call).");
		return -1;
	}
	return 0;
}

static const char *connect_hint(int err)
{
	switch (err) {
	case ENOENT:
		return "no such socket (is dynprof running with --control=unix:PATH?)";
	case ECONNREFUSED:
		return "connection refused (nothing listens there: dynprof has ended, a stale socket?)";
	case EACCES:
	case EPERM:
		return "permission denied (the socket is 0600: root or the user running dynprof only)";
	case ENOTSOCK:
		return "not a socket";
	default:
		return strerror(err);
	}
}

/*
 * A monitor runs as root or as the caller (the socket is 0600): a socket
 * served by anyone else is not dynprof's (a path in /tmp bound by another
 * user once the monitor ended). Nothing is sent to it. fd, or -1 (printed).
 */
static int served_by_us(int fd, const char *path)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
		report_error("dynprof: --remote: %s: cannot tell who serves it: %s; nothing sent",
			     path, strerror(errno));
		close(fd);
		return -1;
	}
	if (cred.uid == 0 || cred.uid == getuid())
		return fd;
	close(fd);
	report_error("dynprof: --remote: %s is not dynprof's control socket: it is served by uid %u, neither root nor you; nothing sent",
		     path, (unsigned)cred.uid);
	return -1;
}

/* The connected socket, or -1 (printed). */
static int connect_to(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	size_t len = strlen(path);
	int fd, e;

	if (len >= sizeof(addr.sun_path)) {
		report_error("dynprof: --remote: %s: the path is too long for a unix socket (at most %zu bytes)",
			     path, sizeof(addr.sun_path) - 1);
		return -1;
	}
	memcpy(addr.sun_path, path, len + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		report_error("dynprof: --remote: cannot make a socket: %s", strerror(errno));
		return -1;
	}
	if (connect(fd, (const struct sockaddr *)&addr, sizeof(addr)) == 0)
		return served_by_us(fd, path);
	e = errno;
	close(fd);
	report_error("dynprof: --remote: cannot connect to %s: %s", path, connect_hint(e));
	return -1;
}

/* All of it, or -1 (printed); 0 too when dynprof closed first, its answer then read. */
static int send_line(int fd, const char *path, const char *line)
{
	size_t len = strlen(line), off = 0;
	struct iovec iov[2] = { { (void *)line, len }, { "\n", 1 } };

	while (off < len + 1) {
		ssize_t n;

		if (off < len) {
			iov[0].iov_base = (char *)line + off;
			iov[0].iov_len = len - off;
			n = writev(fd, iov, 2);
		} else {
			n = send(fd, "\n", 1, MSG_NOSIGNAL);
		}
		if (n < 0 && errno == EINTR)
			continue;
		/* Closed on us (a refused peer): what it said before closing is still to be read. */
		if (n < 0 && (errno == EPIPE || errno == ECONNRESET))
			return 0;
		if (n < 0) {
			report_error("dynprof: --remote: cannot send to %s: %s", path, strerror(errno));
			return -1;
		}
		off += (size_t)n;
	}
	/* Our side is done: dynprof still answers a client that shut down its sending side. */
	shutdown(fd, SHUT_WR);
	return 0;
}

/*
 * One whole line: printed, escaped (report/escape.h: what reaches the
 * terminal cannot move the cursor or start a forged line; dynprof's own
 * lines are printable already); the exit status once it ends the answer,
 * else -1.
 */
static int on_line(struct reader *r, const char *line)
{
	bool plain = text_is_plain(line);
	char *shown = plain ? NULL : text_escape_dup(line);

	printf("%s\n", plain ? line : shown ? shown : "?"); /* "?": no memory to escape it */
	free(shown);
	fflush(stdout);
	if (r->acked)
		return -1; /* events: the stream */
	if (!strncmp(line, "error:", 6))
		return EXIT_REFUSED;
	if (!strncmp(line, "ack", 3) && (line[3] == ' ' || !line[3])) {
		r->acked = true;
		return r->streaming ? -1 : EXIT_ACK;
	}
	return -1;
}

/* Split what was read into lines; the exit status when one ended the answer, else -1. */
static int take_lines(struct reader *r)
{
	char *nl;

	while ((nl = memchr(r->buf, '\n', r->len))) {
		size_t used = (size_t)(nl - r->buf) + 1;
		int rc;

		*nl = '\0';
		rc = on_line(r, r->buf);
		memmove(r->buf, r->buf + used, r->len - used);
		r->len -= used;
		if (rc >= 0)
			return rc;
	}
	return -1;
}

/* Read once: the exit status when the answer ended (or the connection), -1 to go on. */
static int read_some(struct reader *r, int fd, const char *path)
{
	ssize_t n;

	if (r->len >= REPLY_LINE_MAX) {
		report_error("dynprof: --remote: %s sent a line longer than %u MiB: not dynprof's answer",
			     path, REPLY_LINE_MAX >> 20);
		return EXIT_UNREACHED;
	}
	if (r->cap - r->len < 4096) {
		size_t cap = r->cap * 2 + 8192 > REPLY_LINE_MAX + 1 ? REPLY_LINE_MAX + 1 :
								      r->cap * 2 + 8192;
		char *grown = realloc(r->buf, cap);

		if (!grown) {
			report_error("dynprof: --remote: out of memory reading the answer");
			return EXIT_UNREACHED;
		}
		r->buf = grown;
		r->cap = cap;
	}
	n = recv(fd, r->buf + r->len, r->cap - r->len - 1, 0);
	if (n < 0 && errno == EINTR)
		return -1;
	if (n > 0) {
		r->len += (size_t)n;
		return take_lines(r);
	}
	if (r->acked) /* events: dynprof ended the stream */
		return EXIT_ACK;
	if (n < 0)
		report_error("dynprof: --remote: reading from %s: %s", path, strerror(errno));
	else
		report_error("dynprof: --remote: %s closed the connection before answering", path);
	return EXIT_UNREACHED;
}

static int wait_answer(struct reader *r, int fd, const char *path, int timeout_ms)
{
	int64_t deadline = clock_ms() + timeout_ms;
	int sigfd = console_signalfd(), rc = -1;

	while (rc < 0) {
		struct pollfd p[2] = { { .fd = fd, .events = POLLIN },
				       { .fd = sigfd, .events = POLLIN } };
		int64_t left = deadline - clock_ms();
		int ready;

		if (!r->streaming && left <= 0) {
			report_error("dynprof: --remote: no answer from %s within %d ms (--timeout)",
				     path, timeout_ms);
			rc = EXIT_UNREACHED;
			break;
		}
		ready = poll(p, sigfd >= 0 ? 2 : 1, r->streaming ? -1 : (int)left);
		if (ready < 0 && errno != EINTR) {
			report_error("dynprof: --remote: poll: %s", strerror(errno));
			rc = EXIT_UNREACHED;
		} else if (ready > 0 && sigfd >= 0 && p[1].revents) {
			/* Ctrl-C or SIGTERM: the stream (or the wait) ends here. */
			rc = r->acked ? EXIT_ACK : EXIT_UNREACHED;
			if (!r->acked)
				report_error("dynprof: --remote: interrupted before %s answered", path);
		} else if (ready > 0) {
			rc = read_some(r, fd, path);
		}
	}
	if (sigfd >= 0)
		close(sigfd);
	return rc;
}

int remote_client_run(const struct options *o)
{
	char line[CONTROL_LINE_MAX];
	struct reader r = { 0 };
	int fd, rc;

	if (command_line(o->app_argv, line, sizeof(line)))
		return EXIT_OPTION_ERROR;
	r.streaming = !strcmp(o->app_argv[0], "events");
	fd = connect_to(o->remote);
	if (fd < 0)
		return EXIT_UNREACHED;
	rc = send_line(fd, o->remote, line);
	rc = rc ? EXIT_UNREACHED : wait_answer(&r, fd, o->remote, o->timeout_ms);
	free(r.buf);
	close(fd);
	return rc;
}
