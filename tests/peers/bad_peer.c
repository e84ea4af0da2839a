// SPDX-License-Identifier: MIT
/*
 * bad_peer: a misbehaving (or recording) server on a real socket, for the
 * client's tests.
 *
 *   bad_peer MODE PATH
 *
 * Binds PATH (unlinking it first; a "%d" in PATH becomes its own pid, so
 * it can serve the socket a client expects of this very process),
 * prints "ready <pid>", serves ONE
 * client as MODE says, then keeps the socket (unanswered, in the backlog)
 * until 600 s have passed or SIGTERM/SIGINT arrives, and removes PATH.
 *
 * Modes:
 *  silent          accept, never read nor reply
 *  ack-then-silent read the v2 Params, reply Msg{0,0}, read requests, never reply
 *  short           Params ack, then only 4 bytes of the START reply, close
 *  garbage         Params ack, then Msg{99,77} to START
 *  disconnect      Params ack, 300 ms later unsolicited Msg{7,0} Msg{6,0}, close
 *  v1-disconnect   v1: answer TEST_REQ, 300 ms later DISCONN_RSP
 *                  "Idle link too long time.", close
 *  slow-stop       a normal v2 server whose STOP reply comes after
 *                  $BAD_PEER_DELAY_MS (default 3000) ms
 *  forgets-start   a normal v2 server that answers every STOP 4 (not
 *                  started), as one whose window ended without the client
 *  deaf-quit       a normal v2 server that never answers QUIT (prints
 *                  "quit ignored" and holds the connection until its end)
 *  log             a normal v2 server that appends one line per request
 *                  to $BAD_PEER_LOG: "params <json>", "start", "stop", "quit"
 *  fork-holder     Params ack, then a forked child holds the connection
 *                  (prints "holder <pid>", lives HOLDER_MS or until
 *                  SIGTERM/SIGINT, reads nothing), while the parent goes on
 *                  as a normal v2 server: when the parent dies, the client's
 *                  socket stays open, so only an exit report tells it
 *
 * "Normal v2" answers START 0 (2 when already started), STOP 0 (4 when not
 * started), QUIT with Msg{6,0} Msg{7,0} Msg{6,0} and a close, as the agent.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "shared/fdio.h"
#include "dynprof/proto.h"

#define LIFETIME_MS 600000
#define MSG_TIMEOUT_MS 5000 /* the rest of a message once it began */
#define UNSOLICITED_MS 300
#define DEFAULT_DELAY_MS 3000
#define HOLDER_MS 60000 /* the fork-holder child's bounded life */

static int sig_fd = -1;    /* signalfd for SIGTERM/SIGINT */
static int64_t end_ms;     /* the peer's whole lifetime */
static int listen_fd = -1; /* closed by a fork-holder child */

/* ---- waiting and message I/O ------------------------------------------ */

/* Wait for fd (none when -1): 1 readable, 0 deadline passed, -1 a signal came. */
static int wait_event(int fd, int64_t deadline)
{
	struct pollfd pfd[2] = { { .fd = sig_fd, .events = POLLIN }, { .fd = fd, .events = POLLIN } };
	int n;

	do
		n = poll(pfd, fd >= 0 ? 2 : 1, clock_ms_left(deadline));
	while (n < 0 && errno == EINTR);
	if (n < 0 || pfd[0].revents)
		return -1;
	return n > 0;
}

static int wait_readable(int fd, int64_t deadline)
{
	return wait_event(fd, deadline) == 1;
}

/* Sleep `ms`; 0 when a signal (or the end of the lifetime) cut it short. */
static int pause_ms(int ms)
{
	int64_t until = clock_ms() + ms;

	return wait_event(-1, until < end_ms ? until : end_ms) == 0 && until <= end_ms;
}

/*
 * Read what the client sent and nobody will answer: closing a unix socket
 * with unread data makes the client's next read fail with ECONNRESET
 * instead of seeing the end of the stream.
 */
static void discard_pending(int fd)
{
	char buf[4096];

	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

static int read_msg(int fd, void *buf, size_t len)
{
	if (!wait_readable(fd, end_ms))
		return -EINTR;
	return fdio_read_full(fd, buf, len, clock_ms() + MSG_TIMEOUT_MS, NULL);
}

static int send_v2(int fd, int32_t type, int32_t code)
{
	struct proto_v2_msg m;

	proto_v2_encode_response(&m, type, code);
	return fdio_write_full(fd, &m, sizeof(m), clock_ms() + MSG_TIMEOUT_MS);
}

static int send_v1(int fd, int32_t type, int32_t code, const char *detail)
{
	struct proto_v1_response r;

	proto_v1_encode_response(&r, type, code, detail);
	return fdio_write_full(fd, &r, sizeof(r), clock_ms() + MSG_TIMEOUT_MS);
}

/* Read the v2 Params into `json` (may be NULL) and acknowledge them. */
static int params_ack(int fd, char *json)
{
	struct proto_v2_params p;
	int rc = read_msg(fd, &p, sizeof(p));

	if (rc)
		return rc;
	if (json) {
		size_t n = p.data_len < PROTO_DATA_MAX ? p.data_len : PROTO_DATA_MAX - 1;

		memcpy(json, p.data, n);
		json[n] = '\0';
	}
	return send_v2(fd, V2_PARAMS_RSP, V2_SUCCESS);
}

/* Read requests until the client goes away, answering none. */
static void drain(int fd)
{
	struct proto_v2_msg m;

	while (read_msg(fd, &m, sizeof(m)) == 0)
		;
}

/* ---- the log of what a client sent ------------------------------------ */

static void log_line(const char *what, const char *arg)
{
	const char *path = getenv("BAD_PEER_LOG");
	char line[PROTO_DATA_MAX + 64];
	int fd, n;

	if (!path)
		return;
	n = snprintf(line, sizeof(line), "%s%s%s\n", what, arg ? " " : "", arg ? arg : "");
	if (n >= (int)sizeof(line))
		n = (int)sizeof(line) - 1;
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (write(fd, line, (size_t)n) != n)
		fprintf(stderr, "bad_peer: cannot log to %s\n", path);
	close(fd);
}

/* ---- a normal v2 conversation, with hooks for the modes built on it ---- */

struct normal_opts {
	int stop_delay_ms;
	int log;
	int forget; /* STOP: "not started" even after a START that succeeded */
	int deaf;   /* QUIT: never answered, the connection kept open */
};

static int answer_quit(int fd, const struct normal_opts *o)
{
	if (o->log)
		log_line("quit", NULL);
	if (o->deaf) {
		printf("quit ignored\n");
		fflush(stdout);
		wait_event(-1, end_ms);
		return -1;
	}
	if (!send_v2(fd, V2_QUIT_RSP, V2_SUCCESS) && !send_v2(fd, V2_DISCONNECT_RSP, V2_SUCCESS))
		send_v2(fd, V2_QUIT_RSP, V2_SUCCESS);
	return -1;
}

/* One request; -1 when the conversation is over. */
static int answer_normal(int fd, const struct proto_v2_msg *m, int *started, const struct normal_opts *o)
{
	int32_t code;

	switch (m->msg_type) {
	case V2_START_REQ:
		if (o->log)
			log_line("start", NULL);
		code = *started ? V2_ALREADY_START : V2_SUCCESS;
		*started = 1;
		break;
	case V2_STOP_REQ:
		if (o->log)
			log_line("stop", NULL);
		code = *started && !o->forget ? V2_SUCCESS : V2_NOT_START;
		*started = 0;
		if (o->stop_delay_ms && !pause_ms(o->stop_delay_ms))
			return -1;
		break;
	case V2_QUIT_REQ:
		return answer_quit(fd, o);
	default:
		return -1;
	}
	return send_v2(fd, m->msg_type + 1, code) ? -1 : 0;
}

static int serve_normal(int fd, const struct normal_opts *o)
{
	char json[PROTO_DATA_MAX];
	struct proto_v2_msg m;
	int started = 0;

	if (params_ack(fd, json))
		return -1;
	if (o->log)
		log_line("params", json);
	while (read_msg(fd, &m, sizeof(m)) == 0 && answer_normal(fd, &m, &started, o) == 0)
		;
	return -1;
}

/* ---- the modes: each returns the client fd to keep open, or -1 -------- */

static int mode_silent(int fd)
{
	return fd;
}

static int mode_ack_then_silent(int fd)
{
	if (params_ack(fd, NULL) == 0)
		drain(fd);
	return -1;
}

static int mode_short(int fd)
{
	struct proto_v2_msg m;

	if (params_ack(fd, NULL) || read_msg(fd, &m, sizeof(m)))
		return -1;
	proto_v2_encode_response(&m, m.msg_type + 1, V2_SUCCESS);
	if (fdio_write_full(fd, &m, 4, clock_ms() + MSG_TIMEOUT_MS)) {
		/* The client may have gone: a short message is what this mode sends anyway. */
	}
	return -1;
}

static int mode_garbage(int fd)
{
	struct proto_v2_msg m;

	if (params_ack(fd, NULL) || read_msg(fd, &m, sizeof(m)) || send_v2(fd, 99, 77))
		return -1;
	drain(fd);
	return -1;
}

static int mode_disconnect(int fd)
{
	if (params_ack(fd, NULL) || !pause_ms(UNSOLICITED_MS))
		return -1;
	if (!send_v2(fd, V2_DISCONNECT_RSP, V2_SUCCESS))
		send_v2(fd, V2_QUIT_RSP, V2_SUCCESS);
	return -1;
}

static int mode_v1_disconnect(int fd)
{
	struct proto_v1_request req;

	if (read_msg(fd, &req, sizeof(req)) || req.msg_type != V1_TEST_REQ ||
	    send_v1(fd, V1_TEST_RSP, 0, NULL) || !pause_ms(UNSOLICITED_MS))
		return -1;
	/* BAD_PEER_V1_DETAIL: a hostile detail text (escapes, newlines) instead. */
	send_v1(fd, V1_DISCONN_RSP, 0,
		getenv("BAD_PEER_V1_DETAIL") ? getenv("BAD_PEER_V1_DETAIL") : V1_DETAIL_IDLE);
	return -1;
}

static int mode_slow_stop(int fd)
{
	const char *env = getenv("BAD_PEER_DELAY_MS");
	struct normal_opts o = { .stop_delay_ms = env ? atoi(env) : DEFAULT_DELAY_MS };

	return serve_normal(fd, &o);
}

static int mode_forgets_start(int fd)
{
	struct normal_opts o = { .forget = 1 };

	return serve_normal(fd, &o);
}

static int mode_deaf_quit(int fd)
{
	struct normal_opts o = { .deaf = 1 };

	return serve_normal(fd, &o);
}

static int mode_log(int fd)
{
	struct normal_opts o = { .log = 1 };

	return serve_normal(fd, &o);
}

/* The child keeps only the connection: no listening socket, no path to remove. */
static void hold_connection(void)
{
	close(listen_fd);
	printf("holder %d\n", (int)getpid());
	fflush(stdout);
	wait_event(-1, clock_ms() + HOLDER_MS);
	_exit(0);
}

static int mode_fork_holder(int fd)
{
	struct normal_opts o = { 0 };
	struct proto_v2_msg m;
	int started = 0;
	pid_t child;

	if (params_ack(fd, NULL))
		return -1;
	child = fork();
	if (child < 0) {
		fprintf(stderr, "bad_peer: fork: %s\n", strerror(errno));
		return -1;
	}
	if (child == 0)
		hold_connection();
	while (read_msg(fd, &m, sizeof(m)) == 0 && answer_normal(fd, &m, &started, &o) == 0)
		;
	return -1;
}

static const struct mode {
	const char *name;
	int (*serve)(int fd);
} modes[] = {
	{ "silent", mode_silent },
	{ "ack-then-silent", mode_ack_then_silent },
	{ "short", mode_short },
	{ "garbage", mode_garbage },
	{ "disconnect", mode_disconnect },
	{ "v1-disconnect", mode_v1_disconnect },
	{ "slow-stop", mode_slow_stop },
	{ "log", mode_log },
	{ "forgets-start", mode_forgets_start },
	{ "deaf-quit", mode_deaf_quit },
	{ "fork-holder", mode_fork_holder },
};

static const struct mode *find_mode(const char *name)
{
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcmp(modes[i].name, name))
			return &modes[i];
	return NULL;
}

/* ---- the socket and the peer's life ------------------------------------- */

static int listen_on(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(addr.sun_path)) {
		fprintf(stderr, "bad_peer: path too long: %s\n", path);
		return -1;
	}
	strncpy(addr.sun_path, path, sizeof(addr.sun_path) - 1);
	unlink(path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 || listen(fd, 8) < 0) {
		fprintf(stderr, "bad_peer: listen on %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static int setup_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sig_fd = signalfd(-1, &set, SFD_CLOEXEC);
	return sig_fd < 0 ? -1 : 0;
}

/* Serve one client, then hold on until the lifetime ends or a signal. */
static void run(const struct mode *m, int lfd)
{
	int client = -1;

	if (wait_readable(lfd, end_ms)) {
		client = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (client >= 0) {
			int keep = m->serve(client);

			if (keep < 0) {
				discard_pending(client);
				close(client);
			}
			client = keep;
		}
	}
	wait_event(-1, end_ms);
	if (client >= 0)
		close(client);
}

/* PATH with its first "%d" replaced by our pid. */
static void own_pid_path(const char *pattern, char *out, size_t len)
{
	const char *mark = strstr(pattern, "%d");

	if (!mark)
		snprintf(out, len, "%s", pattern);
	else
		snprintf(out, len, "%.*s%d%s", (int)(mark - pattern), pattern, (int)getpid(), mark + 2);
}

int main(int argc, char **argv)
{
	const struct mode *m = argc == 3 ? find_mode(argv[1]) : NULL;
	char path[4096];
	int lfd;

	if (!m) {
		fprintf(stderr, "usage: bad_peer MODE PATH\nmodes:");
		for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
			fprintf(stderr, " %s", modes[i].name);
		fprintf(stderr, "\n");
		return 2;
	}
	if (setup_signals()) {
		fprintf(stderr, "bad_peer: signalfd: %s\n", strerror(errno));
		return 1;
	}
	end_ms = clock_ms() + LIFETIME_MS;
	own_pid_path(argv[2], path, sizeof(path));
	lfd = listen_fd = listen_on(path);
	if (lfd < 0)
		return 1;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	run(m, lfd);
	close(lfd);
	unlink(path);
	return 0;
}
