// SPDX-License-Identifier: MIT
/*
 * Parallel exchanges (session/exchange.c) over real socketpairs, each peer
 * a forked child that reads the request and answers as its plan says:
 * late, never, short, in pieces, or not reading for a while.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shared/fdio.h"
#include "session/exchange.h"
#include "unit.h"

/* What a peer does with the request it is sent. */
struct plan {
	size_t prefill;     /* filler bytes the test sends before the exchange: skipped */
	size_t request;     /* bytes to read first */
	int read_delay_ms;  /* before reading (the sender's buffer fills meanwhile) */
	size_t read_chunk;  /* read at most this much at a time; 0: all */
	int reply_delay_ms; /* after reading, before replying */
	size_t reply;       /* reply bytes (byte i is i & 0xff); 0: none */
	size_t reply_chunk; /* write this much at a time, 20 ms apart; 0: all at once */
	bool close_early;   /* close right after the reply instead of waiting for EOF */
	bool close_first;   /* close before reading anything */
};

static void nap(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* The child's side; its exit status says whether the request arrived whole. */
static int peer(int fd, const struct plan *p)
{
	unsigned char buf[PROTO_MAX_WIRE_SIZE], reply[PROTO_MAX_WIRE_SIZE];
	size_t got = 0;
	int bad = 0;

	if (p->close_first)
		return 0;
	nap(p->read_delay_ms);
	for (size_t skipped = 0; skipped < p->prefill;) {
		ssize_t n = read(fd, buf,
				 p->prefill - skipped < sizeof(buf) ? p->prefill - skipped : sizeof(buf));

		if (n <= 0)
			return 3;
		skipped += (size_t)n;
	}
	while (got < p->request) {
		size_t want = p->request - got;
		ssize_t n;

		if (p->read_chunk && want > p->read_chunk)
			want = p->read_chunk;
		n = read(fd, buf + got, want);
		if (n <= 0)
			return 3;
		got += (size_t)n;
		if (p->read_chunk)
			nap(5);
	}
	for (size_t i = 0; i < got; i++)
		bad |= buf[i] != (unsigned char)(i * 7);
	nap(p->reply_delay_ms);
	for (size_t i = 0; i < p->reply; i++)
		reply[i] = (unsigned char)i;
	for (size_t off = 0; off < p->reply;) {
		size_t n = p->reply_chunk && p->reply - off > p->reply_chunk ? p->reply_chunk :
									       p->reply - off;

		if (write(fd, reply + off, n) != (ssize_t)n)
			return 4;
		off += n;
		if (off < p->reply)
			nap(20);
	}
	if (!p->close_early)
		while (read(fd, buf, sizeof(buf)) > 0) /* until the parent closes */
			;
	return bad ? 5 : 0;
}

struct pair {
	int fd;    /* ours, non-blocking */
	pid_t pid; /* the peer */
};

/* A socketpair with a forked peer on the other end; false when setup failed. */
static bool start_peer(struct pair *pp, const struct plan *p, int sndbuf)
{
	int sv[2];

	pp->fd = -1;
	pp->pid = -1;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return false;
	if (sndbuf && setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf)))
		return false;
	fflush(stdout);
	pp->pid = fork();
	if (pp->pid < 0)
		return false;
	if (pp->pid == 0) {
		/* Other peers' parent ends too, or their EOF never comes. */
		for (int fd = 3; fd < 1024; fd++)
			if (fd != sv[1])
				close(fd);
		_exit(peer(sv[1], p));
	}
	close(sv[1]);
	pp->fd = sv[0];
	return fcntl(pp->fd, F_SETFL, fcntl(pp->fd, F_GETFL) | O_NONBLOCK) == 0;
}

/* Close our end and reap the peer: its exit status (-1: not a normal exit). */
static int end_peer(struct pair *pp)
{
	int st;

	if (pp->fd >= 0)
		close(pp->fd);
	if (pp->pid <= 0 || waitpid(pp->pid, &st, 0) != pp->pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void request(unsigned char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (unsigned char)(i * 7);
}

static bool reply_ok(const struct exchange *x)
{
	for (size_t i = 0; i < x->in_len; i++)
		if (x->in[i] != (unsigned char)i)
			return false;
	return true;
}

TEST(exchanges_run_in_parallel)
{
	const struct plan p = { .request = 64, .reply_delay_ms = 300, .reply = 32 };
	unsigned char out[64];
	struct pair pp[3];
	struct exchange x[3], *xs[3];
	int64_t t0;

	request(out, sizeof(out));
	for (int i = 0; i < 3; i++)
		REQUIRE(start_peer(&pp[i], &p, 0));
	t0 = clock_ms();
	for (int i = 0; i < 3; i++) {
		exchange_init(&x[i], pp[i].fd, out, sizeof(out), 32, t0 + 5000);
		xs[i] = &x[i];
	}
	exchange_run(xs, 3);
	/* One after another would take 900 ms. */
	CHECK(clock_ms() - t0 < 700);
	for (int i = 0; i < 3; i++) {
		CHECK_INT(x[i].result, 0);
		CHECK_INT(x[i].in_done, 32);
		CHECK(reply_ok(&x[i]));
		CHECK(x[i].finished_ms >= t0 + 300);
		CHECK(x[i].finished_wall_us > 0);
		CHECK_INT(end_peer(&pp[i]), 0);
	}
}

TEST(a_silent_peer_times_out_alone)
{
	const struct plan quick = { .request = 16, .reply_delay_ms = 100, .reply = 8 };
	const struct plan silent = { .request = 16 };
	unsigned char out[16];
	struct pair a, b;
	struct exchange xa, xb, *xs[2] = { &xa, &xb };
	int64_t t0;

	request(out, sizeof(out));
	REQUIRE(start_peer(&a, &silent, 0));
	REQUIRE(start_peer(&b, &quick, 0));
	t0 = clock_ms();
	exchange_init(&xa, a.fd, out, sizeof(out), 8, t0 + 400);
	exchange_init(&xb, b.fd, out, sizeof(out), 8, t0 + 5000);
	exchange_run(xs, 2);
	CHECK_INT(xa.result, -ETIMEDOUT);
	CHECK(xa.finished_ms >= t0 + 400);
	CHECK(xa.finished_ms < t0 + 1000);
	CHECK_INT(xb.result, 0);
	CHECK(reply_ok(&xb));
	/* The quick one finished when its peer answered, not at the other's deadline. */
	CHECK(xb.finished_ms < t0 + 400);
	CHECK_INT(end_peer(&a), 0);
	CHECK_INT(end_peer(&b), 0);
}

TEST(short_reply_is_eproto_and_none_is_econnreset)
{
	const struct plan shorter = { .request = 16, .reply = 5, .close_early = true };
	const struct plan none = { .request = 16, .close_early = true };
	unsigned char out[16];
	struct pair a, b;
	struct exchange xa, xb, *xs[2] = { &xa, &xb };

	request(out, sizeof(out));
	REQUIRE(start_peer(&a, &shorter, 0));
	REQUIRE(start_peer(&b, &none, 0));
	exchange_init(&xa, a.fd, out, sizeof(out), 12, clock_ms() + 5000);
	exchange_init(&xb, b.fd, out, sizeof(out), 12, clock_ms() + 5000);
	exchange_run(xs, 2);
	CHECK_INT(xa.result, -EPROTO);
	CHECK_INT(xa.in_done, 5);
	CHECK_INT(xb.result, -ECONNRESET);
	CHECK_INT(xb.in_done, 0);
	CHECK_INT(end_peer(&a), 0);
	CHECK_INT(end_peer(&b), 0);
}

TEST(peer_gone_before_the_request_is_epipe)
{
	const struct plan gone = { .close_first = true };
	unsigned char out[16];
	struct pair a;
	struct exchange x, *xs[1] = { &x };

	request(out, sizeof(out));
	REQUIRE(start_peer(&a, &gone, 0));
	/* Wait for the peer to be gone, so the send meets a closed socket. */
	REQUIRE(fdio_wait_readable(a.fd, clock_ms() + 2000) > 0);
	exchange_init(&x, a.fd, out, sizeof(out), 8, clock_ms() + 2000);
	exchange_run(xs, 1);
	CHECK_INT(x.result, -EPIPE);
	CHECK_INT(end_peer(&a), 0);
}

/* Filler that leaves less room in a smallest send buffer than one request. */
static bool prefill(int fd, size_t len)
{
	unsigned char fill[3000];

	memset(fill, 0xee, sizeof(fill));
	return len <= sizeof(fill) && send(fd, fill, len, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)len;
}

TEST(partial_writes_and_reads_complete)
{
	/*
	 * A smallest send buffer, mostly full of filler the peer only reads
	 * after 200 ms, then 512 bytes at a time: the request goes out in
	 * pieces. The reply comes in 3 pieces, 20 ms apart.
	 */
	const struct plan slow = { .prefill = 1000,
				   .request = PROTO_MAX_WIRE_SIZE,
				   .read_delay_ms = 200,
				   .read_chunk = 512,
				   .reply = PROTO_MAX_WIRE_SIZE,
				   .reply_chunk = 1500 };
	unsigned char out[PROTO_MAX_WIRE_SIZE];
	struct pair a, probe;
	struct exchange x, *xs[1] = { &x };
	ssize_t n;

	request(out, sizeof(out));
	/* First show that such a socket takes less than a request in one send. */
	REQUIRE(start_peer(&probe, &slow, 1));
	REQUIRE(prefill(probe.fd, slow.prefill));
	n = send(probe.fd, out, sizeof(out), MSG_DONTWAIT | MSG_NOSIGNAL);
	CHECK(n >= 0 && (size_t)n < sizeof(out));
	if (n >= 0 && (size_t)n < sizeof(out))
		printf("  one send took %zd of %zu bytes\n", n, sizeof(out));
	end_peer(&probe);
	REQUIRE(start_peer(&a, &slow, 1));
	REQUIRE(prefill(a.fd, slow.prefill));
	exchange_init(&x, a.fd, out, sizeof(out), sizeof(out), clock_ms() + 5000);
	exchange_run(xs, 1);
	CHECK_INT(x.result, 0);
	CHECK_INT(x.out_done, sizeof(out));
	CHECK_INT(x.in_done, sizeof(out));
	CHECK(reply_ok(&x));
	CHECK_INT(end_peer(&a), 0); /* 0: the request arrived whole and in order */
}

TEST(send_only_finishes_when_sent)
{
	const struct plan reader = { .request = 32 };
	unsigned char out[32];
	struct pair a;
	struct exchange x, *xs[1] = { &x };

	request(out, sizeof(out));
	REQUIRE(start_peer(&a, &reader, 0));
	exchange_init(&x, a.fd, out, sizeof(out), 0, clock_ms() + 2000);
	exchange_run(xs, 1);
	CHECK_INT(x.result, 0);
	CHECK_INT(x.out_done, 32);
	CHECK(x.finished_ms < x.deadline);
	CHECK_INT(end_peer(&a), 0);
}

UNIT_MAIN()
