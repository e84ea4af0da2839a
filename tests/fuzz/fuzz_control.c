// SPDX-License-Identifier: MIT
/*
 * Command lines as dynprof reads them (control/control.c, control/script.c):
 * a --commands file, and the bytes a --control client sends over a real
 * unix socket or FIFO (made in a temporary folder, removed at exit). Any
 * program running as dynprof's user can be that client.
 *
 * First byte: bits 0-1 the way in (0 a --commands file read by
 * script_load_file, 1 a socket client that shuts down its sending side at
 * the end, 2 one that just closes, 3 the FIFO, the input and a newline),
 * the rest the size of the pieces the client sends (0: all at once; else
 * a multiple of 97 bytes).
 * Each line control hands on is queued as a --control client's script
 * queues it (script_push_line); nothing is run, except `events`, which
 * the harness carries out as remote.c does (control_stream, then the
 * script's "ack events", or its error on the FIFO).
 *
 * What it promises, checked against a model of control.h's rules built
 * from the input alone: the lines handed on are exactly the input's
 * lines, without the newline and one trailing '\r', in order; a line of
 * CONTROL_LINE_MAX bytes or more (its '\r' counted) is answered "error:
 * line too long" and one holding a NUL "error: NUL byte in line", neither
 * handed on; the unterminated last line counts after a shutdown of the
 * sending side, not after a close; the client is dropped once it closed.
 * What the client reads is exactly the replies in order, whole lines (a
 * socket client dropped because its replies filled its buffer, and the
 * FIFO's reader, whose replies that find ACK full are dropped, see them in
 * order with some missing). After an `events` line a socket client
 * streams: control hands on nothing more of what it sends (nor answers
 * it), and its replies so far and the ack reach it whole through its
 * stream queue. A --commands file is accepted or refused with one "[ERROR] "
 * line (report.c prints with printf: stdout is a memory stream meanwhile),
 * refused when a line holds a NUL.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "fuzz.h"
#include "control/control.h"
#include "control/script.h"
#include "shared/clock.h"

#define PIECE_UNIT 97
#define PUMP_ROUNDS 100000 /* a bound only: each round handles what is ready */

enum ev_kind { EV_LINE, EV_REPLY };

/* What control must do with the input, in order (the model). */
struct event {
	enum ev_kind kind;
	const char *text; /* EV_LINE: points into the model's copy; EV_REPLY: static */
	size_t len;
};

struct buf {
	char *data;
	size_t len, cap;
};

static struct {
	bool ready;
	char dir[40], sock[64], fifo[64], ack[64];
	struct control *sock_ctl, *fifo_ctl;
	int fifo_w, ack_r, memfd;
} env;

/* One input's run. */
static struct {
	struct event *ev;
	size_t nev, next;    /* model events; the next one expected */
	struct buf expected; /* the replies, as they should reach the client */
	struct buf got;      /* what the client read */
	struct script *sc;
	int client;   /* the id control gave the client (0: FIFO) */
	bool socket;  /* a socket client: `events` makes it stream */
	bool dropped; /* the server closed the client's connection */
} run;

static void buf_add(struct buf *b, const char *p, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->data = realloc(b->data, b->cap);
		if (!b->data)
			abort();
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

/* At exit, or when an input crashed (then once only: fuzz.h). */
static void cleanup(void)
{
	control_close(env.sock_ctl);
	control_close(env.fifo_ctl);
	env.sock_ctl = env.fifo_ctl = NULL;
	if (env.fifo_w >= 0)
		close(env.fifo_w);
	if (env.ack_r >= 0)
		close(env.ack_r);
	env.fifo_w = env.ack_r = -1;
	unlink(env.fifo);
	unlink(env.ack);
	rmdir(env.dir);
}

static void setup(void)
{
	char err[256];

	snprintf(env.dir, sizeof(env.dir), "/tmp/dynprof-fuzz-control.XXXXXX");
	FUZZ_CHECK(mkdtemp(env.dir));
	snprintf(env.sock, sizeof(env.sock), "unix:%s/ctl.sock", env.dir);
	snprintf(env.fifo, sizeof(env.fifo), "%s/ctl", env.dir);
	snprintf(env.ack, sizeof(env.ack), "%s/ack", env.dir);
	env.fifo_w = env.ack_r = -1;
	atexit(cleanup);
	fuzz_cleanup_on_crash(cleanup);
	env.sock_ctl = control_open(env.sock, err, sizeof(err));
	FUZZ_CHECK(env.sock_ctl);
	FUZZ_CHECK(mkfifo(env.ack, 0600) == 0);
	/* The reader first: then replies have somewhere to go (control opens ACK O_RDWR anyway). */
	env.ack_r = open(env.ack, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	FUZZ_CHECK(env.ack_r >= 0);
	{
		char spec[160];

		snprintf(spec, sizeof(spec), "fifo:%s,%s", env.fifo, env.ack);
		env.fifo_ctl = control_open(spec, err, sizeof(err));
	}
	FUZZ_CHECK(env.fifo_ctl);
	env.fifo_w = open(env.fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	FUZZ_CHECK(env.fifo_w >= 0);
	env.memfd = memfd_create("commands", MFD_CLOEXEC);
	FUZZ_CHECK(env.memfd >= 0);
	env.ready = true;
}

/* ---- the model ------------------------------------------------------------------ */

static void model_add(enum ev_kind kind, const char *text, size_t len)
{
	run.ev[run.nev++] = (struct event){ kind, text, len };
}

/* A line the script reads as `events` (blanks around it allowed, as script_parse_line does). */
static bool is_events(const char *p, size_t len)
{
	char line[CONTROL_LINE_MAX], err[256];
	struct script_cmd cmd;
	bool yes;

	memcpy(line, p, len);
	line[len] = '\0';
	if (script_parse_line(line, 0, &cmd, err, sizeof(err)))
		return false;
	yes = cmd.op == SCRIPT_EVENTS;
	script_cmd_free(&cmd);
	return yes;
}

/*
 * One raw line (without its newline): what control.h says becomes of it.
 * True when it makes a socket client stream (nothing after it counts).
 */
static bool model_line(const char *p, size_t len)
{
	if (len >= CONTROL_LINE_MAX) {
		model_add(EV_REPLY, "error: line too long", 20);
		return false;
	}
	if (len && p[len - 1] == '\r')
		len--;
	if (memchr(p, '\0', len)) {
		model_add(EV_REPLY, "error: NUL byte in line", 23);
		return false;
	}
	model_add(EV_LINE, p, len);
	return run.socket && is_events(p, len);
}

/* `last_counts`: the unterminated last line is handed on (shutdown, FIFO). */
static void model_build(const char *p, size_t n, bool last_counts)
{
	run.ev = malloc((n + 1) * sizeof(*run.ev));
	if (!run.ev)
		abort();
	run.nev = run.next = 0;
	while (n > 0) {
		const char *nl = memchr(p, '\n', n);
		size_t take = nl ? (size_t)(nl - p) : n;

		/* An over-long unterminated line was answered as soon as it grew too long. */
		if ((nl || last_counts || take >= CONTROL_LINE_MAX) && model_line(p, take))
			return;
		p += take + (nl != NULL);
		n -= take + (nl != NULL);
	}
}

/* The replies of control itself that precede the next line, into `expected`. */
static void model_replies(void)
{
	while (run.next < run.nev && run.ev[run.next].kind == EV_REPLY) {
		buf_add(&run.expected, run.ev[run.next].text, run.ev[run.next].len);
		buf_add(&run.expected, "\n", 1);
		run.next++;
	}
}

/* ---- the parts control and script call -------------------------------------- */

static void on_reply(void *ctx, const char *text)
{
	struct control *ctl = ctx;

	buf_add(&run.expected, text, strcspn(text, "\n"));
	buf_add(&run.expected, "\n", 1);
	control_reply(ctl, run.client, text);
}

/* `events`, carried out as remote.c does: the stream, then the script's ack. */
static void start_events(struct control *ctl)
{
	char err[256], reply[300];

	if (control_stream(ctl, run.client, err, sizeof(err))) {
		FUZZ_CHECK(!run.socket && !strcmp(err, "events needs a unix control socket"));
		snprintf(reply, sizeof(reply), "error: %s", err);
		on_reply(ctl, reply);
		return;
	}
	FUZZ_CHECK(run.socket);
	on_reply(ctl, "ack events");
}

/*
 * The grammar's share of the model (config/rule.h): a line the parser
 * takes is queued without a word; one it refuses is answered at once by
 * exactly one "error: " line. Selectors and status included.
 */
static void grammar_push(const char *line)
{
	struct script_cmd cmd;
	char err[512];
	size_t before = run.expected.len;
	bool ok = script_parse_line(line, clock_wall_us() / 1000, &cmd, err, sizeof(err)) == 0;

	if (ok)
		script_cmd_free(&cmd);
	script_push_line(run.sc, line);
	if (ok) {
		FUZZ_CHECK(run.expected.len == before);
	} else {
		const char *r = run.expected.data + before;
		size_t n = run.expected.len - before;

		FUZZ_CHECK(n > 8 && !memcmp(r, "error: ", 7) && memchr(r, '\n', n) == r + n - 1);
	}
}

static void on_line(void *ctx, int client, const char *line)
{
	const struct event *e;

	(void)ctx;
	model_replies();
	FUZZ_CHECK(run.next < run.nev);
	e = &run.ev[run.next++];
	FUZZ_CHECK(e->kind == EV_LINE);
	FUZZ_CHECK(strlen(line) == e->len && !memcmp(line, e->text, e->len));
	FUZZ_CHECK(client == run.client || (run.client < 0 && client > 0));
	run.client = client;
	grammar_push(line);
	if (is_events(line, e->len))
		start_events(ctx ? ctx : (run.socket ? env.sock_ctl : env.fifo_ctl));
}

/* ---- the client side ---------------------------------------------------------- */

static void drain(int fd)
{
	char chunk[8192];
	ssize_t n;

	while ((n = recv(fd, chunk, sizeof(chunk), MSG_DONTWAIT)) > 0)
		buf_add(&run.got, chunk, (size_t)n);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK))
		run.dropped = true;
}

static void drain_fifo(void)
{
	char chunk[8192];
	ssize_t n;

	while ((n = read(env.ack_r, chunk, sizeof(chunk))) > 0)
		buf_add(&run.got, chunk, (size_t)n);
}

#define NO_READER (-2)
#define FIFO_READER (-1)

/* Let control handle all that is ready; the client (socket or ACK FIFO) reads its replies. */
static void pump(struct control *ctl, int client_fd)
{
	for (int round = 0; round < PUMP_ROUNDS; round++) {
		struct pollfd p[CONTROL_MAX_POLLFDS];
		int n = control_pollfds(ctl, p, CONTROL_MAX_POLLFDS);

		if (poll(p, (nfds_t)n, 0) <= 0)
			return;
		for (int i = 0; i < n; i++)
			if (p[i].revents)
				control_event(ctl, &p[i], on_line, NULL);
		if (client_fd >= 0)
			drain(client_fd);
		else if (client_fd == FIFO_READER)
			drain_fifo();
	}
	FUZZ_CHECK(!"control_event never settled");
}

/* Send all of it in pieces of `piece` bytes (0: at once), control handling each. */
static void send_all(struct control *ctl, int fd, const uint8_t *p, size_t n, size_t piece, bool fifo)
{
	while (n > 0 && !run.dropped) {
		size_t want = piece && piece < n ? piece : n;
		ssize_t w = fifo ? write(fd, p, want) : send(fd, p, want, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
			FUZZ_CHECK(!fifo && errno == EPIPE); /* dropped */
			return;
		}
		if (w > 0) {
			p += w;
			n -= (size_t)w;
		}
		pump(ctl, fifo ? FIFO_READER : fd);
	}
}

static int clients_of(struct control *ctl)
{
	struct pollfd p[CONTROL_MAX_POLLFDS];

	return control_pollfds(ctl, p, CONTROL_MAX_POLLFDS) - 1;
}

/* Every whole reply line the client read, in order, is one of those expected. */
static void check_subsequence(void)
{
	size_t e = 0, g = 0;

	FUZZ_CHECK(run.got.len == 0 || run.got.data[run.got.len - 1] == '\n');
	while (g < run.got.len) {
		const char *gl = run.got.data + g, *gnl = memchr(gl, '\n', run.got.len - g);
		size_t glen = (size_t)(gnl - gl) + 1;

		for (;;) {
			const char *el = run.expected.data + e;
			const char *enl;

			FUZZ_CHECK(e < run.expected.len); /* a reply nobody sent */
			enl = memchr(el, '\n', run.expected.len - e);
			e += (size_t)(enl - el) + 1;
			if ((size_t)(enl - el) + 1 == glen && !memcmp(el, gl, glen))
				break;
		}
		g += glen;
	}
}

static void finish(void)
{
	/* Dropped: control's own replies up to the next line may have gone out all the same. */
	model_replies();
	if (!run.dropped)
		FUZZ_CHECK(run.next == run.nev); /* every line handed on or answered */
	if (!run.dropped && run.client != 0) {
		FUZZ_CHECK(run.got.len == run.expected.len);
		FUZZ_CHECK(!run.got.len || !memcmp(run.got.data, run.expected.data, run.got.len));
	} else {
		check_subsequence();
	}
}

static void over_socket(const uint8_t *data, size_t size, size_t piece, bool shut)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	FUZZ_CHECK(fd >= 0);
	memcpy(addr.sun_path, env.sock + 5, strlen(env.sock + 5) + 1);
	FUZZ_CHECK(connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0);
	run.client = -1;
	run.socket = true;
	run.sc = script_new(&(struct script_host){ 0 }, on_reply, env.sock_ctl);
	FUZZ_CHECK(run.sc);
	model_build((const char *)data, size, shut);
	pump(env.sock_ctl, fd); /* accepted */
	FUZZ_CHECK(clients_of(env.sock_ctl) == 1);
	send_all(env.sock_ctl, fd, data, size, piece, false);
	if (shut && !run.dropped) {
		shutdown(fd, SHUT_WR);
		pump(env.sock_ctl, fd);
	}
	drain(fd);
	finish();
	close(fd);
	/*
	 * A client that closed is dropped: within a second, not at the first
	 * look (one replay under two suites with ASan found it still there).
	 */
	for (int tries = 0; tries < 100; tries++) {
		pump(env.sock_ctl, NO_READER);
		if (clients_of(env.sock_ctl) == 0)
			break;
		poll(NULL, 0, 10);
	}
	FUZZ_CHECK(clients_of(env.sock_ctl) == 0);
	script_free(run.sc);
}

static void over_fifo(const uint8_t *data, size_t size, size_t piece)
{
	/* The FIFO's line buffer outlives the input: a newline ends its last line. */
	uint8_t *all = malloc(size + 1);

	FUZZ_CHECK(all);
	memcpy(all, data, size);
	all[size] = '\n';
	run.client = 0;
	run.sc = script_new(&(struct script_host){ 0 }, on_reply, env.fifo_ctl);
	FUZZ_CHECK(run.sc);
	model_build((const char *)all, size + 1, false);
	send_all(env.fifo_ctl, env.fifo_w, all, size + 1, piece, true);
	drain_fifo();
	finish();
	script_free(run.sc);
	free(all);
}

/* A --commands file: accepted, or refused with one line. */
static void commands_file(const uint8_t *data, size_t size)
{
	char path[64], *out = NULL;
	FILE *real = stdout, *mem;
	struct script *sc = script_new(&(struct script_host){ 0 }, NULL, NULL);
	size_t outlen = 0;
	int rc, errors = 0;

	FUZZ_CHECK(sc);
	FUZZ_CHECK(ftruncate(env.memfd, 0) == 0);
	FUZZ_CHECK(pwrite(env.memfd, data, size, 0) == (ssize_t)size);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", env.memfd);
	mem = open_memstream(&out, &outlen);
	FUZZ_CHECK(mem);
	stdout = mem;
	rc = script_load_file(sc, path);
	stdout = real;
	fclose(mem);
	for (size_t i = 0; i + 8 <= outlen; i++)
		if ((i == 0 || out[i - 1] == '\n') && !memcmp(out + i, "[ERROR] ", 8))
			errors++;
	FUZZ_CHECK(rc == 0 || rc == -1);
	FUZZ_CHECK(errors == (rc ? 1 : 0));
	FUZZ_CHECK(rc || !memchr(data, '\0', size)); /* a NUL is refused, never cut at */
	free(out);
	script_free(sc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t piece;

	if (size < 1)
		return 0;
	if (!env.ready)
		setup();
	piece = (size_t)(data[0] >> 2) * PIECE_UNIT;
	memset(&run, 0, sizeof(run));
	switch (data[0] & 3) {
	case 0:
		commands_file(data + 1, size - 1);
		break;
	case 1:
	case 2:
		over_socket(data + 1, size - 1, piece, (data[0] & 3) == 1);
		break;
	default:
		over_fifo(data + 1, size - 1, piece);
		break;
	}
	free(run.ev);
	free(run.expected.data);
	free(run.got.data);
	return 0;
}
