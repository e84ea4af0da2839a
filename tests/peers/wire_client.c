// SPDX-License-Identifier: MIT
/*
 * wire_client: a raw CANN dynamic-profiling client for the conformance
 * tests (tests/integration/conformance.sh). It knows the wire layouts
 * (include/dynprof/proto.h) and nothing else of dynprof: every byte it
 * sends is what the script says, so a test can send what no real client
 * would.
 *
 *   wire_client [--connect=PATH|@NAME] [--netns=NSFILE] [--pad] [--v1|--v2]
 *               [--timeout=SEC] [COMMAND...]
 *
 * --connect connects at once (PATH: a file socket; @NAME: the abstract
 * name NAME, addrlen = 2 + 1 + strlen(NAME) as CANN binds it; --pad uses
 * sizeof(struct sockaddr_un) instead). --netns joins that network
 * namespace first (abstract names belong to one). --v1/--v2 (default v2)
 * pick the shape of start/stop/quit and of the replies read. --timeout is
 * the default wait of the reading commands (10 s).
 *
 * Commands, one per argument, else one per line of stdin ("#" lines and
 * blank lines skipped). SEC may be a fraction.
 *   connect | connect-nb    (re)connect (nb: non-blocking connect);
 *                           prints "connected peer=<pid>" or "connect-error <ERRNO>"
 *   connect-fails           a connect that must fail: "connect-error <ERRNO>"
 *   params JSON             v2 Params, dataLen strlen(JSON), 4100 bytes in one write
 *   params-len N JSON       v2 Params with dataLen N
 *   msg TYPE STATUS         v2 Msg
 *   start [JSON] | stop | quit   v2 Msg{1|3|5,0}; v1 Request 0 (JSON as data) | 2 | 4
 *   test                    v1 TEST_REQ
 *   req TYPE [DATA]         v1 Request, msgDataLen strlen(DATA)
 *   req-len TYPE LEN [DATA] v1 Request with msgDataLen LEN
 *   bytes N                 N zero bytes, one write
 *   replies v1|v2           the shape of the replies read from now on
 *   read [SEC]              one reply: "reply ...", "timeout", "eof" or "short <n>"
 *   expect T,S[,TEXT]       one reply that must be Msg{T,S} (v1: and text TEXT,
 *                           exactly; "*" as S or TEXT: any); a v1 text that is not
 *                           NUL-terminated with len < 128 fails too
 *   eof [SEC]               EOF must come within SEC, with nothing before it
 *   noeof SEC               no EOF during SEC (replies are printed): "open"
 *   silent SEC              nothing at all (no byte, no EOF) during SEC: "silent"
 *   drain [SEC]             print replies until EOF or SEC: "drained <n> eof|open"
 *   shut-wr                 shutdown(SHUT_WR): the server reads EOF, we still read
 *   close                   close the connection
 *   sleep SEC
 *
 * Output: one line per event on stdout ("sent ...", "reply ...", ...).
 * v2 replies print as "reply T,S"; v1 as "reply T,S,"TEXT"" (escaped),
 * plus " bad-text len=N" when the text is not a C string of length len.
 * Exit status: 0 when every command did what it must; 1 at the first
 * failed expect/eof/noeof/silent/connect-fails ("failed: ..." line);
 * 2 for a usage error; 3 when --connect fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "dynprof/proto.h"

#define DEFAULT_TIMEOUT_MS 10000
#define LINE_MAX_LEN (2 * PROTO_DATA_MAX)

static struct {
	const char *addr; /* PATH or @NAME */
	int pad;
	int v1;         /* start/stop/quit shape */
	int replies_v1; /* reply shape */
	int timeout_ms;
	int fd;
} wc = { .fd = -1, .timeout_ms = DEFAULT_TIMEOUT_MS };

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static const char *errname(int err)
{
	const char *n = strerrorname_np(err);

	return n ? n : "E?";
}

static int failed(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int failed(const char *fmt, ...)
{
	va_list ap;

	printf("failed: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	return -1;
}

/* SEC as milliseconds; a fraction is fine. -1 when it is not a number. */
static int parse_sec(const char *text, int def)
{
	char *end;
	double v;

	if (!text || !*text)
		return def;
	errno = 0;
	v = strtod(text, &end);
	if (errno || *end || v < 0 || v > 86400)
		return -1;
	return (int)(v * 1000);
}

static int parse_int(const char *text, long *out)
{
	char *end;

	if (!text || !*text)
		return -1;
	errno = 0;
	*out = strtol(text, &end, 0);
	return errno || *end ? -1 : 0;
}

/* ---- connecting ---------------------------------------------------------- */

static socklen_t fill_addr(struct sockaddr_un *sa)
{
	size_t n;

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (wc.addr[0] == '@') {
		n = strlen(wc.addr + 1);
		if (n > sizeof(sa->sun_path) - 1)
			n = sizeof(sa->sun_path) - 1;
		memcpy(sa->sun_path + 1, wc.addr + 1, n);
		/* The leading NUL counts, no trailing NUL: as CANN binds it. */
		return wc.pad ? sizeof(*sa) :
				(socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
	}
	n = strlen(wc.addr);
	if (n > sizeof(sa->sun_path) - 1)
		n = sizeof(sa->sun_path) - 1;
	memcpy(sa->sun_path, wc.addr, n);
	return wc.pad ? sizeof(*sa) : (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
}

static void close_conn(void)
{
	if (wc.fd >= 0)
		close(wc.fd);
	wc.fd = -1;
}

/* Wait for a non-blocking connect to finish; 0 or a positive errno. */
static int finish_nb_connect(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	socklen_t len = sizeof(int);
	int err = 0;

	if (poll(&p, 1, wc.timeout_ms) <= 0)
		return ETIMEDOUT;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		return errno;
	return err;
}

/* 0 connected, else a positive errno (printed either way). */
static int do_connect(int nonblock)
{
	struct sockaddr_un sa;
	socklen_t len;
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	int err = 0;

	close_conn();
	if (!wc.addr) {
		say("connect-error no --connect address");
		return EINVAL;
	}
	len = fill_addr(&sa);
	wc.fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0), 0);
	if (wc.fd < 0) {
		err = errno;
	} else if (connect(wc.fd, (struct sockaddr *)&sa, len) < 0) {
		err = errno == EINPROGRESS ? finish_nb_connect(wc.fd) : errno;
	}
	if (err) {
		close_conn();
		say("connect-error %s", errname(err));
		return err;
	}
	if (nonblock)
		fcntl(wc.fd, F_SETFL, fcntl(wc.fd, F_GETFL) & ~O_NONBLOCK);
	if (getsockopt(wc.fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) == 0)
		say("connected peer=%d", (int)cred.pid);
	else
		say("connected peer=?");
	return 0;
}

static int join_netns(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || setns(fd, CLONE_NEWNET) < 0) {
		fprintf(stderr, "wire_client: cannot join %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/* ---- sending ------------------------------------------------------------- */

static int send_all(const void *buf, size_t len, const char *what)
{
	ssize_t n;

	if (wc.fd < 0) {
		say("send-error not connected (%s)", what);
		return 0;
	}
	/* One write: the server does a single recv() of the whole message. */
	n = send(wc.fd, buf, len, MSG_NOSIGNAL);
	if (n < 0)
		say("send-error %s (%s)", errname(errno), what);
	else if ((size_t)n != len)
		say("send-short %zd of %zu (%s)", n, len, what);
	else
		say("sent %s", what);
	return 0; /* a refused send shows in what the next read finds */
}

static int send_params(long data_len, const char *json)
{
	struct proto_v2_params p;
	char what[64];
	size_t n = strlen(json);

	memset(&p, 0, sizeof(p));
	p.data_len = (uint32_t)data_len;
	memcpy(p.data, json, n < sizeof(p.data) ? n : sizeof(p.data));
	snprintf(what, sizeof(what), "params dataLen=%u bytes=%zu", p.data_len, sizeof(p));
	return send_all(&p, sizeof(p), what);
}

static int send_msg(long type, long status)
{
	struct proto_v2_msg m = { .msg_type = (int32_t)type, .status_code = (int32_t)status };
	char what[64];

	snprintf(what, sizeof(what), "msg %d,%d", m.msg_type, m.status_code);
	return send_all(&m, sizeof(m), what);
}

static int send_req(long type, long len, const char *data)
{
	struct proto_v1_request r;
	char what[64];
	size_t n = data ? strlen(data) : 0;

	memset(&r, 0, sizeof(r));
	r.msg_type = (int32_t)type;
	r.msg_data_len = (uint32_t)(len < 0 ? (long)n : len);
	if (n)
		memcpy(r.msg_data, data, n < sizeof(r.msg_data) ? n : sizeof(r.msg_data));
	snprintf(what, sizeof(what), "req %d len=%u bytes=%zu", r.msg_type, r.msg_data_len, sizeof(r));
	return send_all(&r, sizeof(r), what);
}

static int send_bytes(long n)
{
	static char zeros[2 * PROTO_MAX_WIRE_SIZE];
	char what[32];

	if (n < 0 || (size_t)n > sizeof(zeros))
		return failed("bytes %ld: 0..%zu", n, sizeof(zeros));
	snprintf(what, sizeof(what), "bytes %ld", n);
	return send_all(zeros, (size_t)n, what);
}

/* ---- reading ------------------------------------------------------------- */

enum got { GOT_REPLY, GOT_EOF, GOT_TIMEOUT, GOT_SHORT, GOT_ERROR };

struct reply {
	int32_t type, status;
	uint32_t len; /* v1 */
	char text[PROTO_V1_DETAIL_MAX + 1];
	int text_ok; /* v1: NUL-terminated, len < 128, strlen == len */
	size_t got;  /* bytes, for GOT_SHORT */
	int err;     /* for GOT_ERROR */
};

/* Read one whole reply of the current shape, waiting up to `ms`. */
static enum got read_reply(int ms, struct reply *r)
{
	union {
		struct proto_v2_msg v2;
		struct proto_v1_response v1;
	} u;
	size_t want = wc.replies_v1 ? sizeof(u.v1) : sizeof(u.v2), got = 0;
	int64_t deadline = now_ms() + ms;

	memset(r, 0, sizeof(*r));
	if (wc.fd < 0) {
		r->err = ENOTCONN;
		return GOT_ERROR;
	}
	while (got < want) {
		struct pollfd p = { .fd = wc.fd, .events = POLLIN };
		int64_t left = deadline - now_ms();
		ssize_t n;

		if (left < 0)
			left = 0;
		n = poll(&p, 1, (int)left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0) {
			r->got = got;
			return got ? GOT_SHORT : GOT_TIMEOUT;
		}
		n = recv(wc.fd, (char *)&u + got, want - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == ECONNRESET && !got)
			return GOT_EOF;
		if (n < 0) {
			r->err = errno;
			return GOT_ERROR;
		}
		if (n == 0) {
			r->got = got;
			return got ? GOT_SHORT : GOT_EOF;
		}
		got += (size_t)n;
	}
	if (!wc.replies_v1) {
		r->type = u.v2.msg_type;
		r->status = u.v2.status_code;
		return GOT_REPLY;
	}
	r->type = u.v1.msg_type;
	r->status = u.v1.status_code;
	r->len = u.v1.msg_data_len;
	memcpy(r->text, u.v1.msg_data, sizeof(u.v1.msg_data));
	r->text[sizeof(u.v1.msg_data)] = '\0';
	r->text_ok = r->len < sizeof(u.v1.msg_data) &&
		     strnlen(u.v1.msg_data, sizeof(u.v1.msg_data)) == r->len;
	return GOT_REPLY;
}

static void escape(const char *in, size_t n, char *out, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < n && in[i] && o + 5 < len; i++) {
		unsigned char ch = (unsigned char)in[i];

		if (ch == '"' || ch == '\\')
			o += (size_t)snprintf(out + o, len - o, "\\%c", ch);
		else if (ch < 0x20 || ch >= 0x7f)
			o += (size_t)snprintf(out + o, len - o, "\\x%02x", ch);
		else
			out[o++] = (char)ch;
	}
	out[o] = '\0';
}

/* Print what a read found, as one line. */
static void show(enum got g, const struct reply *r)
{
	char esc[4 * PROTO_V1_DETAIL_MAX + 1];

	switch (g) {
	case GOT_REPLY:
		if (!wc.replies_v1) {
			say("reply %d,%d", r->type, r->status);
			break;
		}
		escape(r->text, PROTO_V1_DETAIL_MAX, esc, sizeof(esc));
		if (r->text_ok)
			say("reply %d,%d,\"%s\"", r->type, r->status, esc);
		else
			say("reply %d,%d,\"%s\" bad-text len=%u", r->type, r->status, esc, r->len);
		break;
	case GOT_EOF:
		say("eof");
		break;
	case GOT_TIMEOUT:
		say("timeout");
		break;
	case GOT_SHORT:
		say("short %zu", r->got);
		break;
	case GOT_ERROR:
		say("read-error %s", errname(r->err));
		break;
	}
}

/* "T,S" or "T,S,TEXT": TEXT is everything after the second comma. */
static int expect(const char *want, int ms)
{
	struct reply r;
	enum got g = read_reply(ms, &r);
	long t, s = 0;
	int any_status;
	char buf[LINE_MAX_LEN], *c1, *c2, *text = NULL;

	snprintf(buf, sizeof(buf), "%s", want);
	c1 = strchr(buf, ',');
	if (!c1)
		return failed("expect %s: want T,S[,TEXT]", want);
	*c1 = '\0';
	c2 = strchr(c1 + 1, ',');
	if (c2) {
		*c2 = '\0';
		text = c2 + 1;
	}
	any_status = !strcmp(c1 + 1, "*");
	if (parse_int(buf, &t) || (!any_status && parse_int(c1 + 1, &s)))
		return failed("expect %s: want T,S[,TEXT]", want);
	show(g, &r);
	if (g != GOT_REPLY)
		return failed("expect %s: got no reply", want);
	if (r.type != t || (!any_status && r.status != s))
		return failed("expect %s: got %d,%d", want, r.type, r.status);
	if (wc.replies_v1 && !r.text_ok)
		return failed("expect %s: text not a C string of length %u", want, r.len);
	if (text && strcmp(text, "*") && strcmp(text, r.text))
		return failed("expect %s: got text \"%s\"", want, r.text);
	return 0;
}

/* Read until EOF or `ms`; returns the number of replies, sets *eof. */
static int drain(int ms, int print, int *eof)
{
	int64_t deadline = now_ms() + ms;
	int count = 0;
	struct reply r;
	enum got g;

	*eof = 0;
	for (;;) {
		int64_t left = deadline - now_ms();

		g = read_reply(left > 0 ? (int)left : 0, &r);
		if (print && g != GOT_TIMEOUT)
			show(g, &r);
		if (g == GOT_REPLY) {
			count++;
			continue;
		}
		*eof = g == GOT_EOF || g == GOT_ERROR;
		return count;
	}
}

static int cmd_eof(int ms)
{
	struct reply r;
	enum got g = read_reply(ms, &r);

	show(g, &r);
	return g == GOT_EOF ? 0 : failed("eof: the server did not close, with nothing before");
}

static int cmd_noeof(int ms)
{
	int eof;

	drain(ms, 1, &eof);
	if (eof)
		return failed("noeof: the server closed the connection");
	say("open");
	return 0;
}

static int cmd_silent(int ms)
{
	struct pollfd p = { .fd = wc.fd, .events = POLLIN };
	int64_t deadline = now_ms() + ms;
	int n;

	if (wc.fd < 0)
		return failed("silent: not connected");
	do {
		int64_t left = deadline - now_ms();

		n = poll(&p, 1, left > 0 ? (int)left : 0);
	} while (n < 0 && errno == EINTR);
	if (n > 0) {
		struct reply r;

		show(read_reply(0, &r), &r);
		return failed("silent: the server sent or closed");
	}
	say("silent");
	return 0;
}

/* ---- the script ---------------------------------------------------------- */

/* Split "word rest": *rest is what follows the first blank, or "". */
static char *split(char *line, char **rest)
{
	char *sp = strchr(line, ' ');

	if (sp) {
		*sp = '\0';
		*rest = sp + 1;
	} else {
		*rest = line + strlen(line);
	}
	return line;
}

static int cmd_v1_req(char *args, int with_len)
{
	char *type_s, *len_s = NULL, *data;
	long type, len = -1;

	type_s = split(args, &data);
	if (with_len) {
		len_s = split(data, &data);
		if (parse_int(len_s, &len))
			return failed("req-len TYPE LEN [DATA]");
	}
	if (parse_int(type_s, &type))
		return failed("req TYPE [DATA]");
	return send_req(type, len, data);
}

static int cmd_command(int type, char *args)
{
	static const int v1_types[] = { V1_START_REQ, V1_STOP_REQ, V1_QUIT_REQ };
	static const int v2_types[] = { V2_START_REQ, V2_STOP_REQ, V2_QUIT_REQ };

	if (wc.v1)
		return send_req(v1_types[type], -1, args);
	return send_msg(v2_types[type], 0);
}

static int run_rest(const char *word, char *rest)
{
	int ms = parse_sec(rest, wc.timeout_ms);
	long a, b;
	char *s2;

	if (!strcmp(word, "read")) {
		struct reply r;

		if (ms < 0)
			return failed("read [SEC]");
		show(read_reply(ms, &r), &r);
		return 0;
	}
	if (!strcmp(word, "eof") || !strcmp(word, "noeof") || !strcmp(word, "silent") ||
	    !strcmp(word, "drain") || !strcmp(word, "sleep")) {
		if (ms < 0)
			return failed("%s SEC", word);
		if (!strcmp(word, "eof"))
			return cmd_eof(ms);
		if (!strcmp(word, "noeof"))
			return cmd_noeof(ms);
		if (!strcmp(word, "silent"))
			return cmd_silent(ms);
		if (!strcmp(word, "drain")) {
			int eof, n = drain(ms, 1, &eof);

			say("drained %d %s", n, eof ? "eof" : "open");
			return 0;
		}
		struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000L };

		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
		return 0;
	}
	if (!strcmp(word, "msg")) {
		s2 = strpbrk(rest, " ,");
		if (!s2)
			return failed("msg TYPE STATUS");
		*s2++ = '\0';
		if (parse_int(rest, &a) || parse_int(s2, &b))
			return failed("msg TYPE STATUS");
		return send_msg(a, b);
	}
	if (!strcmp(word, "params-len")) {
		char *json;
		char *n = split(rest, &json);

		if (parse_int(n, &a))
			return failed("params-len N JSON");
		return send_params(a, json);
	}
	if (!strcmp(word, "bytes"))
		return parse_int(rest, &a) ? failed("bytes N") : send_bytes(a);
	return failed("unknown command \"%s\"", word);
}

static int run(char *line)
{
	char *rest, *word;

	while (*line == ' ' || *line == '\t')
		line++;
	if (!*line || *line == '#')
		return 0;
	word = split(line, &rest);
	if (!strcmp(word, "connect") || !strcmp(word, "connect-nb")) {
		do_connect(!strcmp(word, "connect-nb"));
		return 0;
	}
	if (!strcmp(word, "connect-fails"))
		return do_connect(0) ? 0 : failed("connect-fails: it connected");
	if (!strcmp(word, "params"))
		return send_params((long)strlen(rest), rest);
	if (!strcmp(word, "start"))
		return cmd_command(0, rest);
	if (!strcmp(word, "stop"))
		return cmd_command(1, rest);
	if (!strcmp(word, "quit"))
		return cmd_command(2, rest);
	if (!strcmp(word, "test"))
		return send_req(V1_TEST_REQ, -1, "");
	if (!strcmp(word, "req"))
		return cmd_v1_req(rest, 0);
	if (!strcmp(word, "req-len"))
		return cmd_v1_req(rest, 1);
	if (!strcmp(word, "replies")) {
		if (strcmp(rest, "v1") && strcmp(rest, "v2"))
			return failed("replies v1|v2");
		wc.replies_v1 = !strcmp(rest, "v1");
		return 0;
	}
	if (!strcmp(word, "expect"))
		return expect(rest, wc.timeout_ms);
	if (!strcmp(word, "shut-wr")) {
		if (wc.fd < 0 || shutdown(wc.fd, SHUT_WR) < 0)
			say("shut-wr-error %s", errname(wc.fd < 0 ? ENOTCONN : errno));
		else
			say("shut-wr");
		return 0;
	}
	if (!strcmp(word, "close")) {
		close_conn();
		say("closed");
		return 0;
	}
	return run_rest(word, rest);
}

static int run_stdin(void)
{
	static char line[LINE_MAX_LEN];

	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = '\0';
		if (run(line))
			return 1;
	}
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: wire_client [--connect=PATH|@NAME] [--netns=NSFILE] [--pad] "
			"[--v1|--v2] [--timeout=SEC] [COMMAND...]\n");
	return 2;
}

static int parse_option(const char *arg)
{
	if (!strncmp(arg, "--connect=", 10))
		wc.addr = arg + 10;
	else if (!strncmp(arg, "--netns=", 8))
		return join_netns(arg + 8);
	else if (!strcmp(arg, "--pad"))
		wc.pad = 1;
	else if (!strcmp(arg, "--v1"))
		wc.v1 = wc.replies_v1 = 1;
	else if (!strcmp(arg, "--v2"))
		wc.v1 = wc.replies_v1 = 0;
	else if (!strncmp(arg, "--timeout=", 10) && (wc.timeout_ms = parse_sec(arg + 10, -1)) >= 0)
		return 0;
	else
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	static char line[LINE_MAX_LEN];
	int i;

	for (i = 1; i < argc && !strncmp(argv[i], "--", 2); i++)
		if (parse_option(argv[i]))
			return usage();
	if (wc.addr && do_connect(0))
		return 3;
	if (i == argc)
		return run_stdin();
	for (; i < argc; i++) {
		snprintf(line, sizeof(line), "%s", argv[i]);
		if (run(line))
			return 1;
	}
	return 0;
}
