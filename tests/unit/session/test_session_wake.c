// SPDX-License-Identifier: MIT
/*
 * What wakes the loop for a handshake or a command (session/session_join.c,
 * session/session.c), over real socketpairs: an exchange whose reply was
 * already there when it began ends inside exchange_begin, so no fd of it
 * is polled; its timeout must then be 0, or the loop slept until something
 * else woke it (a join waited for the socket pass, up to 100 ms, one in
 * two under load). A pending one's timeout is its deadline.
 */
#include <sys/socket.h>
#include <unistd.h>

#include "session/session_impl.h"
#include "shared/clock.h"
#include "unit.h"

/* A target whose exchange (a 16-byte request, a 16-byte reply) began; the reply written first when `answered`. */
static void begin(struct target *t, int sv[2], bool answered)
{
	static const char req[16] = "request", rep[16] = "reply";

	*t = (struct target){ .fd = sv[0], .ep_fd = -1, .result_fd = -1 };
	if (answered)
		REQUIRE(write(sv[1], rep, sizeof(rep)) == (ssize_t)sizeof(rep));
	exchange_init(&t->xchg, sv[0], req, sizeof(req), sizeof(rep), clock_ms() + 60000);
	exchange_begin(&t->xchg);
}

static void check_wake(bool handshake)
{
	struct target t, *targets[1] = { &t };
	int hs[1] = { 0 }; /* its slot, in the list of handshaking ones */
	struct session s = { .targets = targets, .ntargets = 1, .hs = hs, .nhs = 1, .hscap = 1 };
	int sv[2];

	REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) == 0);
	begin(&t, sv, false);
	t.handshaking = handshake;
	t.in_flight = !handshake;
	s.handshakes = handshake;
	s.flights = !handshake; /* as pump() counts a command in flight */
	CHECK(exchange_pending(&t.xchg));
	if (handshake)
		CHECK(session_join_timeout_ms(&s) > 50000);
	else
		CHECK(session_flight_timeout_ms(&s) > 50000);
	close(sv[0]), close(sv[1]);

	REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) == 0);
	begin(&t, sv, true);
	t.handshaking = handshake;
	t.in_flight = !handshake;
	CHECK(!exchange_pending(&t.xchg)); /* ended as it began */
	if (handshake)
		CHECK_INT(session_join_timeout_ms(&s), 0);
	else
		CHECK_INT(session_flight_timeout_ms(&s), 0);
	close(sv[0]), close(sv[1]);
}

TEST(a_handshake_answered_as_it_began_wakes_the_loop_at_once)
{
	check_wake(true);
}

TEST(a_command_answered_as_it_began_wakes_the_loop_at_once)
{
	check_wake(false);
}

UNIT_MAIN()
