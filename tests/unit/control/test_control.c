// SPDX-License-Identifier: MIT
/*
 * --control over real FIFOs and unix sockets in a private folder under
 * /tmp. Only local fds, no other processes: the test plays both sides and
 * drives control_pollfds/control_event with its own poll loop.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "control/control.h"
#include "shared/fdio.h"
#include "unit.h"

#define MAX_LINES 8
#define WAIT_MS 2000

/* What the control channel handed us; with `ack`, each line is answered "ack <line>". */
struct seen {
	struct control *ctl;
	bool ack;
	int n;
	int client[MAX_LINES];
	char line[MAX_LINES][CONTROL_LINE_MAX];
};

static char dir[64];

static void on_line(void *ctx, int client, const char *line)
{
	struct seen *s = ctx;
	char reply[CONTROL_LINE_MAX + 8];

	if (s->n < MAX_LINES) {
		s->client[s->n] = client;
		snprintf(s->line[s->n], sizeof(s->line[0]), "%s", line);
		s->n++;
	}
	if (s->ack) {
		snprintf(reply, sizeof(reply), "ack %s", line);
		control_reply(s->ctl, client, reply);
	}
}

/* The client id that sent `line`, or -1. */
static int sender(const struct seen *s, const char *line)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->line[i], line))
			return s->client[i];
	return -1;
}

/* How many fds the control wants polled: 1 + its clients. */
static int polled(const struct control *ctl)
{
	struct pollfd pfds[CONTROL_MAX_POLLFDS];

	return control_pollfds(ctl, pfds, CONTROL_MAX_POLLFDS);
}

/* One poll round over the control's fds; returns how many fired. */
static int pump_once(struct control *ctl, struct seen *s, int timeout_ms)
{
	struct pollfd pfds[CONTROL_MAX_POLLFDS];
	int n = control_pollfds(ctl, pfds, CONTROL_MAX_POLLFDS);
	int fired = poll(pfds, (nfds_t)n, timeout_ms);

	s->ctl = ctl;
	for (int i = 0; fired > 0 && i < n; i++)
		control_event(ctl, &pfds[i], on_line, s);
	return fired;
}

/* Pump until `lines` lines have arrived or WAIT_MS passed. */
static void pump_lines(struct control *ctl, struct seen *s, int lines)
{
	int64_t deadline = clock_ms() + WAIT_MS;

	while (s->n < lines && clock_ms() < deadline)
		pump_once(ctl, s, 50);
}

/* Pump until the control polls `want` fds (listener + clients) or WAIT_MS passed. */
static int pump_clients(struct control *ctl, struct seen *s, int want)
{
	int64_t deadline = clock_ms() + WAIT_MS;

	while (polled(ctl) != want && clock_ms() < deadline)
		pump_once(ctl, s, 50);
	return polled(ctl);
}

/* The test's private folder; false (printed) when it cannot be made. */
static bool make_dir(void)
{
	snprintf(dir, sizeof(dir), "/tmp/dynprof-control-XXXXXX");
	if (!mkdtemp(dir)) {
		printf("  mkdtemp: %s\n", strerror(errno));
		return false;
	}
	return true;
}

static const char *in_dir(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
	return buf;
}

/* Empty the folder (it holds only files the tests made) and remove it. */
static void remove_dir(void)
{
	static const char *names[] = { "ctl", "ack", "sock", "file", NULL };
	char p[128];

	for (int i = 0; names[i]; i++)
		unlink(in_dir(p, sizeof(p), names[i]));
	if (rmdir(dir) < 0)
		printf("  cannot remove %s: %s\n", dir, strerror(errno));
}

static bool exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

static mode_t file_type_and_mode(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 ? st.st_mode : 0;
}

static void put(int fd, const char *text)
{
	CHECK_INT(write(fd, text, strlen(text)), strlen(text));
}

/* Everything readable on fd within a short wait, NUL-terminated. */
static const char *drain(int fd, char *buf, size_t len)
{
	size_t got = 0;

	while (got + 1 < len && fdio_wait_readable(fd, clock_ms() + 200) > 0) {
		ssize_t n = read(fd, buf + got, len - 1 - got);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	return buf;
}

static int connect_to(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* A socket bound at path; listening when `listening`. -1 (printed) on failure. */
static int bound_socket(const char *path, bool listening)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
	    (listening && listen(fd, 4) < 0)) {
		printf("  bound_socket %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* ---- FIFO mode ------------------------------------------------------------------ */

TEST(fifo_made_when_missing_lines_arrive_and_acks_readable)
{
	char ctl_path[128], ack_path[128], spec[300], err[256], buf[256];
	struct seen s = { .ack = true };
	struct control *ctl;
	int w, r;

	REQUIRE(make_dir());
	in_dir(ctl_path, sizeof(ctl_path), "ctl");
	in_dir(ack_path, sizeof(ack_path), "ack");
	snprintf(spec, sizeof(spec), "fifo:%s,%s", ctl_path, ack_path);
	ctl = control_open(spec, err, sizeof(err));
	CHECK(ctl != NULL);
	if (!ctl) {
		printf("  %s\n", err);
		remove_dir();
		return;
	}
	CHECK_INT(file_type_and_mode(ctl_path), S_IFIFO | 0600);
	CHECK_INT(file_type_and_mode(ack_path), S_IFIFO | 0600);
	w = open(ctl_path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	r = open(ack_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	put(w, "start\nstop\r\n\n");
	pump_lines(ctl, &s, 3);
	CHECK_INT(s.n, 3);
	CHECK_STR(s.line[0], "start");
	CHECK_STR(s.line[1], "stop");
	CHECK_STR(s.line[2], "");
	CHECK_INT(s.client[0], 0);
	CHECK_STR(drain(r, buf, sizeof(buf)), "ack start\nack stop\nack \n");
	close(w);
	close(r);
	control_close(ctl);
	CHECK(!exists(ctl_path)); /* we made them, so we remove them */
	CHECK(!exists(ack_path));
	remove_dir();
}

TEST(fifo_partial_lines_join_across_writes)
{
	char ctl_path[128], spec[300], err[256];
	struct seen s = { 0 };
	struct control *ctl;
	int w;

	REQUIRE(make_dir());
	snprintf(spec, sizeof(spec), "fifo:%s", in_dir(ctl_path, sizeof(ctl_path), "ctl"));
	ctl = control_open(spec, err, sizeof(err));
	CHECK(ctl != NULL);
	if (!ctl) {
		remove_dir();
		return;
	}
	w = open(ctl_path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	put(w, "sta");
	pump_once(ctl, &s, 100);
	CHECK_INT(s.n, 0);
	put(w, "rt\nsto");
	pump_lines(ctl, &s, 1);
	put(w, "p\n");
	pump_lines(ctl, &s, 2);
	CHECK_INT(s.n, 2);
	CHECK_STR(s.line[0], "start");
	CHECK_STR(s.line[1], "stop");
	close(w);
	control_close(ctl);
	remove_dir();
}

/* A bare PATH naming an existing FIFO is FIFO mode; a FIFO we did not make stays. */
TEST(fifo_writer_leaving_gives_no_eof_and_user_fifo_stays)
{
	char ctl_path[128], err[256];
	struct seen s = { 0 };
	struct control *ctl;
	int w;

	REQUIRE(make_dir());
	in_dir(ctl_path, sizeof(ctl_path), "ctl");
	CHECK_INT(mkfifo(ctl_path, 0600), 0);
	ctl = control_open(ctl_path, err, sizeof(err));
	CHECK(ctl != NULL);
	if (!ctl) {
		remove_dir();
		return;
	}
	w = open(ctl_path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	put(w, "a\n");
	close(w);
	pump_lines(ctl, &s, 1);
	CHECK_INT(s.n, 1);
	/* With the writer gone nothing may fire: no EOF, no POLLHUP to spin on. */
	CHECK_INT(pump_once(ctl, &s, 100), 0);
	w = open(ctl_path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	put(w, "b\n");
	pump_lines(ctl, &s, 2);
	CHECK_INT(s.n, 2);
	CHECK_STR(s.line[1], "b");
	close(w);
	control_close(ctl);
	CHECK_INT(file_type_and_mode(ctl_path) & S_IFMT, S_IFIFO);
	remove_dir();
}

TEST(fifo_refuses_regular_file_and_ack_equal_to_ctl)
{
	char file[128], ctl_path[128], spec[300], err[256];
	int fd;

	REQUIRE(make_dir());
	in_dir(file, sizeof(file), "file");
	fd = open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	close(fd);
	snprintf(spec, sizeof(spec), "fifo:%s", file);
	err[0] = '\0';
	CHECK(control_open(spec, err, sizeof(err)) == NULL);
	CHECK(strstr(err, "--control: ") == err);
	CHECK(strstr(err, file) && strstr(err, "is not a FIFO"));
	CHECK_INT(file_type_and_mode(file) & S_IFMT, S_IFREG);

	in_dir(ctl_path, sizeof(ctl_path), "ctl");
	snprintf(spec, sizeof(spec), "fifo:%s,%s", ctl_path, ctl_path);
	err[0] = '\0';
	CHECK(control_open(spec, err, sizeof(err)) == NULL);
	CHECK(strstr(err, ctl_path) != NULL);
	CHECK(!exists(ctl_path)); /* made for the attempt, removed with it */
	remove_dir();
}

TEST(bad_specs_refused)
{
	static const char *specs[] = { "", "fifo:", "unix:", "fifo:/tmp/x,", NULL };
	char err[256];

	for (int i = 0; specs[i]; i++) {
		err[0] = '\0';
		CHECK(control_open(specs[i], err, sizeof(err)) == NULL);
		CHECK(strstr(err, "--control: ") == err);
	}
}

/* ---- unix mode ------------------------------------------------------------------- */

static struct control *open_unix(char *sock, size_t len)
{
	char spec[300], err[256];
	struct control *ctl;

	in_dir(sock, len, "sock");
	snprintf(spec, sizeof(spec), "unix:%s", sock);
	ctl = control_open(spec, err, sizeof(err));
	if (!ctl)
		printf("  %s\n", err);
	return ctl;
}

/* A fresh folder with a control socket in it; NULL (checked, folder gone) when it cannot open. */
static struct control *unix_fixture(char *sock, size_t len)
{
	struct control *ctl;

	if (!make_dir())
		return NULL;
	ctl = open_unix(sock, len);
	CHECK(ctl != NULL);
	if (!ctl)
		remove_dir();
	return ctl;
}

TEST(unix_replies_go_to_the_right_client)
{
	char sock[128], buf[256];
	struct seen s = { .ack = true };
	struct control *ctl;
	int a, b;

	ctl = unix_fixture(sock, sizeof(sock));
	REQUIRE(ctl != NULL);
	CHECK_INT(file_type_and_mode(sock), S_IFSOCK | 0600);
	a = connect_to(sock);
	b = connect_to(sock);
	CHECK_INT(pump_clients(ctl, &s, 3), 3);
	put(a, "one\n");
	put(b, "two\n");
	pump_lines(ctl, &s, 2);
	CHECK_INT(s.n, 2);
	CHECK(sender(&s, "one") > 0 && sender(&s, "two") > 0);
	CHECK(sender(&s, "one") != sender(&s, "two"));
	CHECK_STR(drain(a, buf, sizeof(buf)), "ack one\n");
	CHECK_STR(drain(b, buf, sizeof(buf)), "ack two\n");
	/* A later reply, by id alone; only its first line goes out. */
	control_reply(ctl, sender(&s, "two"), "later\nnot this");
	CHECK_STR(drain(b, buf, sizeof(buf)), "later\n");
	CHECK_STR(drain(a, buf, sizeof(buf)), "");
	close(a);
	close(b);
	control_close(ctl);
	remove_dir();
}

TEST(unix_client_disconnect_and_half_close)
{
	char sock[128], buf[256];
	struct seen s = { .ack = true };
	struct control *ctl;
	int a, b;

	ctl = unix_fixture(sock, sizeof(sock));
	REQUIRE(ctl != NULL);
	a = connect_to(sock);
	put(a, "x\nunfinished");
	pump_lines(ctl, &s, 1);
	CHECK_STR(drain(a, buf, sizeof(buf)), "ack x\n"); /* read: its close is a clean EOF */
	close(a);
	CHECK_INT(pump_clients(ctl, &s, 1), 1); /* dropped */
	CHECK_INT(s.n, 1);                      /* its unterminated line with it */
	control_reply(ctl, s.client[0], "nobody hears this");

	/* Shutting down only its sending side: the last line counts, replies still arrive. */
	b = connect_to(sock);
	put(b, "stop");
	shutdown(b, SHUT_WR);
	pump_lines(ctl, &s, 2);
	CHECK_INT(s.n, 2);
	CHECK_STR(s.line[1], "stop");
	CHECK(s.client[1] > 0 && s.client[1] != s.client[0]);
	CHECK_STR(drain(b, buf, sizeof(buf)), "ack stop\n");
	CHECK_INT(pump_clients(ctl, &s, 2), 2); /* kept, and nothing spins */
	CHECK_INT(pump_once(ctl, &s, 100), 0);
	close(b);
	CHECK_INT(pump_clients(ctl, &s, 1), 1);
	control_close(ctl);
	remove_dir();
}

TEST(unix_too_many_clients_told_so)
{
	char sock[128], buf[256];
	struct seen s = { 0 };
	int fds[CONTROL_MAX_CLIENTS + 1];
	struct control *ctl;

	ctl = unix_fixture(sock, sizeof(sock));
	REQUIRE(ctl != NULL);
	for (int i = 0; i < CONTROL_MAX_CLIENTS; i++)
		fds[i] = connect_to(sock);
	CHECK_INT(pump_clients(ctl, &s, CONTROL_MAX_POLLFDS), CONTROL_MAX_POLLFDS);
	fds[CONTROL_MAX_CLIENTS] = connect_to(sock);
	pump_once(ctl, &s, 200);
	CHECK_STR(drain(fds[CONTROL_MAX_CLIENTS], buf, sizeof(buf)), "error: too many control clients\n");
	CHECK_INT(read(fds[CONTROL_MAX_CLIENTS], buf, sizeof(buf)), 0); /* and closed */
	CHECK_INT(polled(ctl), CONTROL_MAX_POLLFDS);
	for (int i = 0; i <= CONTROL_MAX_CLIENTS; i++)
		close(fds[i]);
	control_close(ctl);
	remove_dir();
}

TEST(unix_bad_lines_refused_then_next_line_ok)
{
	char sock[128], buf[256], big[CONTROL_LINE_MAX + 100];
	struct seen s = { 0 };
	struct control *ctl;
	int a;

	ctl = unix_fixture(sock, sizeof(sock));
	REQUIRE(ctl != NULL);
	a = connect_to(sock);
	memset(big, 'a', sizeof(big));
	CHECK_INT(write(a, big, sizeof(big)), sizeof(big));
	put(a, "\n");
	CHECK_INT(write(a, "st\0op\n", 6), 6); /* would run as "st" */
	put(a, "ok\n");
	pump_lines(ctl, &s, 1);
	CHECK_INT(s.n, 1);
	CHECK_STR(s.line[0], "ok");
	CHECK_STR(drain(a, buf, sizeof(buf)), "error: line too long\nerror: NUL byte in line\n");
	/* The longest line that fits still arrives whole. */
	memset(big, 'b', CONTROL_LINE_MAX - 1);
	big[CONTROL_LINE_MAX - 1] = '\n';
	CHECK_INT(write(a, big, CONTROL_LINE_MAX), CONTROL_LINE_MAX);
	pump_lines(ctl, &s, 2);
	CHECK_INT(s.n, 2);
	CHECK_INT(strlen(s.line[1]), CONTROL_LINE_MAX - 1);
	close(a);
	control_close(ctl);
	remove_dir();
}

/* A client that never reads is dropped once its socket buffer is full. */
TEST(unix_client_not_reading_is_dropped)
{
	char sock[128], text[1024];
	struct seen s = { 0 };
	struct control *ctl;
	int a, i;

	ctl = unix_fixture(sock, sizeof(sock));
	REQUIRE(ctl != NULL);
	a = connect_to(sock);
	put(a, "hello\n");
	pump_lines(ctl, &s, 1);
	CHECK_INT(s.n, 1);
	memset(text, 'r', sizeof(text) - 1);
	text[sizeof(text) - 1] = '\0';
	for (i = 0; i < 100000 && polled(ctl) == 2; i++)
		control_reply(ctl, s.client[0], text);
	CHECK(i < 100000);
	CHECK_INT(polled(ctl), 1);
	close(a);
	control_close(ctl);
	remove_dir();
}

/* One long line (status --json of many targets) reaches a client that reads it only later. */
TEST(unix_client_gets_a_long_reply_whole)
{
	size_t len = 1 << 20, got = 0;
	char sock[128], *text = malloc(len + 1), *back = malloc(len + 2);
	struct seen s = { 0 };
	struct control *ctl;
	ssize_t n;
	int a;

	REQUIRE(text && back);
	ctl = unix_fixture(sock, sizeof(sock));
	REQUIRE(ctl != NULL);
	a = connect_to(sock);
	put(a, "status --json\n");
	pump_lines(ctl, &s, 1);
	memset(text, 'j', len);
	text[len] = '\0';
	control_reply(ctl, s.client[0], text);
	CHECK_INT(polled(ctl), 2); /* still a client */
	while (got < len + 1 && (n = recv(a, back + got, len + 2 - got, 0)) > 0)
		got += (size_t)n;
	CHECK(got == len + 1 && back[len] == '\n' && !memcmp(back, text, len));
	close(a);
	control_close(ctl);
	remove_dir();
	free(text);
	free(back);
}

/* A client gone before its first reply: that reply drops it, its other lines are skipped. */
TEST(unix_lines_after_a_failed_reply_are_skipped)
{
	char sock[128];
	struct seen s = { .ack = true };
	struct control *ctl;
	int a;

	ctl = unix_fixture(sock, sizeof(sock));
	REQUIRE(ctl != NULL);
	a = connect_to(sock);
	CHECK_INT(pump_clients(ctl, &s, 2), 2);
	put(a, "first\nsecond\n");
	close(a);
	CHECK_INT(pump_clients(ctl, &s, 1), 1);
	CHECK_INT(s.n, 1);
	CHECK_STR(s.line[0], "first");
	control_close(ctl);
	remove_dir();
}

TEST(unix_stale_socket_replaced_and_removed_at_close)
{
	char sock[128], buf[64];
	struct seen s = { .ack = true };
	struct control *ctl;
	int fd;

	REQUIRE(make_dir());
	in_dir(sock, sizeof(sock), "sock");
	fd = bound_socket(sock, true);
	REQUIRE(fd >= 0);
	close(fd); /* its file stays: stale */
	ctl = open_unix(sock, sizeof(sock));
	CHECK(ctl != NULL);
	if (!ctl) {
		remove_dir();
		return;
	}
	fd = connect_to(sock);
	CHECK(fd >= 0);
	put(fd, "hi\n");
	pump_lines(ctl, &s, 1);
	CHECK_STR(drain(fd, buf, sizeof(buf)), "ack hi\n");
	close(fd);
	control_close(ctl);
	CHECK(!exists(sock));
	remove_dir();
}

TEST(unix_socket_replaced_by_another_file_is_left_alone)
{
	char sock[128], tmp[128];
	struct control *ctl;
	int fd;

	ctl = unix_fixture(sock, sizeof(sock));
	REQUIRE(ctl != NULL);
	in_dir(tmp, sizeof(tmp), "file");
	fd = open(tmp, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	close(fd);
	CHECK_INT(rename(tmp, sock), 0);
	control_close(ctl);
	CHECK_INT(file_type_and_mode(sock) & S_IFMT, S_IFREG);
	remove_dir();
}

TEST(unix_live_socket_and_other_files_refused)
{
	char sock[128], spec[300], err[256];
	int live;

	REQUIRE(make_dir());
	in_dir(sock, sizeof(sock), "sock");
	live = bound_socket(sock, true);
	REQUIRE(live >= 0);
	snprintf(spec, sizeof(spec), "unix:%s", sock);
	err[0] = '\0';
	CHECK(control_open(spec, err, sizeof(err)) == NULL);
	CHECK(strstr(err, sock) && strstr(err, "is in use by another program"));
	CHECK(exists(sock));
	close(live);
	unlink(sock);

	close(open(sock, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
	err[0] = '\0';
	CHECK(control_open(spec, err, sizeof(err)) == NULL);
	CHECK(strstr(err, sock) && strstr(err, "exists and is not a socket"));
	CHECK_INT(file_type_and_mode(sock) & S_IFMT, S_IFREG);
	remove_dir();
}

TEST(unix_too_long_path_refused)
{
	char spec[300], err[512];

	memset(spec, 0, sizeof(spec));
	memcpy(spec, "unix:/tmp/", 10);
	memset(spec + 10, 'x', 150);
	err[0] = '\0';
	CHECK(control_open(spec, err, sizeof(err)) == NULL);
	CHECK(strstr(err, spec + 5) != NULL);
	CHECK(strstr(err, "at most 107") != NULL);
	CHECK(!exists(spec + 5));
}

UNIT_MAIN()
