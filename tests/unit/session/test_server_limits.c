// SPDX-License-Identifier: MIT
/* A target's limits and the counts its server keeps, as CANN counts them (session/server_limits.h). */
#include <string.h>

#include "session/server_limits.h"
#include "unit.h"

static struct server_limits limits(enum proto_version v, enum sock_flavour f, const char *req,
				   const char *idle, const char *flavour)
{
	struct server_limits_env env = { .max_requests = req, .idle_timeout = idle, .flavour = flavour };
	struct server_limits l;

	server_limits_for(&l, v, f, &env);
	return l;
}

TEST(cann_9x_answers_101_and_idles_1800_ticks_over_128_accepts)
{
	struct server_limits l = limits(PROTO_V2, SOCK_FLAVOUR_FILE, NULL, NULL, NULL);

	CHECK_INT(l.max_commands, 101);
	CHECK_INT(l.idle_ticks, 1800);
	CHECK(!l.idle_reset_at_start);
	CHECK_INT(l.max_accepts, 128);
	CHECK(!l.scaled);
}

TEST(cann_v1_counts_test_req_so_100_commands_and_restarts_idle_at_start)
{
	struct server_limits l = limits(PROTO_V1, SOCK_FLAVOUR_FILE, NULL, NULL, NULL);

	CHECK_INT(l.max_commands, 100);
	CHECK_INT(l.idle_ticks, 1800);
	CHECK(l.idle_reset_at_start);
	CHECK_INT(l.max_accepts, 128);
}

TEST(cann_850_abstract_has_no_limits)
{
	struct server_limits l = limits(PROTO_V2, SOCK_FLAVOUR_ABSTRACT, "5", "3", NULL);

	CHECK_INT(l.max_commands, 0);
	CHECK_INT(l.idle_ticks, 0);
	CHECK_INT(l.max_accepts, 0);
	/* the agent's flavour variable says the same on a file socket */
	l = limits(PROTO_V2, SOCK_FLAVOUR_FILE, "5", "3", "abstract");
	CHECK_INT(l.max_commands, 0);
	CHECK_INT(l.idle_ticks, 0);
}

TEST(agent_environment_scales_the_limits)
{
	struct server_limits l = limits(PROTO_V2, SOCK_FLAVOUR_FILE, "5", "3", "file");

	CHECK_INT(l.max_commands, 5);
	CHECK_INT(l.idle_ticks, 3);
	CHECK(l.scaled);
	l = limits(PROTO_V1, SOCK_FLAVOUR_FILE, "5", NULL, NULL);
	CHECK_INT(l.max_commands, 4);                               /* TEST_REQ counts */
	l = limits(PROTO_V2, SOCK_FLAVOUR_FILE, "abc", "-1", NULL); /* the agent refuses these: defaults */
	CHECK_INT(l.max_commands, 101);
	CHECK_INT(l.idle_ticks, 1800);
	CHECK(!l.scaled);
}

TEST(idle_is_cumulative_over_the_connection_and_paused_while_collecting)
{
	struct server_limits l = limits(PROTO_V2, SOCK_FLAVOUR_FILE, NULL, NULL, NULL);
	struct server_count c = { 0 };

	server_count_connected(&c, 1000);
	CHECK_INT(server_count_idle_ms(&c, 3000), 2000);
	server_count_command(&c, &l, 3000, true);
	server_count_collecting(&c, 3000, true);
	CHECK_INT(server_count_idle_ms(&c, 90000), 2000); /* a window counts nothing */
	server_count_command(&c, &l, 90000, false);
	server_count_collecting(&c, 90000, false);
	CHECK_INT(server_count_idle_ms(&c, 95000), 7000); /* 9.x never resets */
	server_count_connected(&c, 95000);
	CHECK_INT(server_count_idle_ms(&c, 95000), 0);
	CHECK_INT(c.commands, 0);
}

TEST(v1_restarts_idle_at_every_start_req)
{
	struct server_limits l = limits(PROTO_V1, SOCK_FLAVOUR_FILE, NULL, NULL, NULL);
	struct server_count c = { 0 };

	server_count_connected(&c, 0);
	server_count_command(&c, &l, 5000, false); /* a STOP does not */
	CHECK_INT(server_count_idle_ms(&c, 5000), 5000);
	server_count_command(&c, &l, 6000, true);
	CHECK_INT(server_count_idle_ms(&c, 7000), 1000);
}

TEST(reconnect_margin_is_a_quarter_between_half_a_second_and_a_minute)
{
	CHECK_INT(server_idle_reconnect_ms(&(struct server_limits){ .idle_ticks = 1800 }), 1740000);
	CHECK_INT(server_idle_reconnect_ms(&(struct server_limits){ .idle_ticks = 3 }), 2250);
	CHECK_INT(server_idle_reconnect_ms(&(struct server_limits){ .idle_ticks = 1 }), 500);
	CHECK_INT(server_idle_reconnect_ms(&(struct server_limits){ .idle_ticks = 0 }), -1);
}

TEST(reconnect_for_idle_before_the_limit_never_while_collecting)
{
	struct server_limits l = limits(PROTO_V2, SOCK_FLAVOUR_FILE, NULL, "3", NULL);
	struct server_count c = { 0 };

	server_count_connected(&c, 0);
	CHECK_INT(server_needs_reconnect(&l, &c, 2249, false), SERVER_KEEP);
	CHECK_INT(server_reconnect_due_ms(&l, &c, 2000), 250);
	CHECK_INT(server_needs_reconnect(&l, &c, 2250, false), SERVER_RECONNECT_IDLE);
	CHECK_INT(server_reconnect_due_ms(&l, &c, 2500), 0);
	/* gaps add up: 1.5 s, a window, 1 s more */
	server_count_connected(&c, 0);
	server_count_collecting(&c, 1500, true);
	CHECK_INT(server_needs_reconnect(&l, &c, 60000, false), SERVER_KEEP);
	CHECK_INT(server_reconnect_due_ms(&l, &c, 60000), -1);
	server_count_collecting(&c, 60000, false);
	CHECK_INT(server_needs_reconnect(&l, &c, 60700, false), SERVER_KEEP);
	CHECK_INT(server_needs_reconnect(&l, &c, 60750, false), SERVER_RECONNECT_IDLE);
}

TEST(v1_start_about_to_go_needs_no_idle_reconnect)
{
	struct server_limits l = limits(PROTO_V1, SOCK_FLAVOUR_FILE, NULL, "3", NULL);
	struct server_count c = { 0 };

	server_count_connected(&c, 0);
	CHECK_INT(server_needs_reconnect(&l, &c, 2500, true), SERVER_KEEP);
	CHECK_INT(server_needs_reconnect(&l, &c, 2500, false), SERVER_RECONNECT_IDLE);
}

TEST(reconnect_for_requests_so_a_window_fits)
{
	struct server_limits l = limits(PROTO_V2, SOCK_FLAVOUR_FILE, "5", NULL, NULL);
	struct server_count c = { 0 };

	server_count_connected(&c, 0);
	CHECK_INT(server_needs_reconnect(&l, &c, 0, true), SERVER_KEEP);
	c.commands = 2;
	CHECK_INT(server_needs_reconnect(&l, &c, 0, true), SERVER_KEEP);
	c.commands = 3; /* START + STOP would be the 4th and 5th: the 5th is answered, then DISCONNECT */
	CHECK_INT(server_needs_reconnect(&l, &c, 0, true), SERVER_RECONNECT_REQUESTS);
	c.collecting = true;
	CHECK_INT(server_needs_reconnect(&l, &c, 0, true), SERVER_KEEP);
}

TEST(a_limit_too_small_for_a_window_does_not_loop)
{
	struct server_limits l = limits(PROTO_V2, SOCK_FLAVOUR_FILE, "1", NULL, NULL);
	struct server_count c = { 0 };

	server_count_connected(&c, 0);
	CHECK_INT(server_needs_reconnect(&l, &c, 0, true), SERVER_KEEP);
	l = limits(PROTO_V1, SOCK_FLAVOUR_FILE, "1", NULL, NULL);
	CHECK_INT(l.max_commands, 1);
}

TEST(abstract_never_reconnects)
{
	struct server_limits l = limits(PROTO_V2, SOCK_FLAVOUR_ABSTRACT, NULL, NULL, NULL);
	struct server_count c = { 0 };

	server_count_connected(&c, 0);
	c.commands = 1000;
	CHECK_INT(server_needs_reconnect(&l, &c, 100000000, false), SERVER_KEEP);
	CHECK_INT(server_reconnect_due_ms(&l, &c, 0), -1);
}

TEST(disconnect_cause_requests_then_exit_then_idle_else_unknown)
{
	struct server_limits l = limits(PROTO_V2, SOCK_FLAVOUR_FILE, "3", "2", NULL);
	struct server_count c = { 0 };
	char text[200];

	server_count_connected(&c, 0);
	c.commands = 3;
	CHECK_INT(server_disconnect_cause(&l, &c, 0, true), SERVER_CAUSE_REQUESTS);
	server_cause_text(SERVER_CAUSE_REQUESTS, &l, &c, 0, text, sizeof(text));
	CHECK_STR(text, "request limit reached (the server answers 3 requests per connection)");
	c.commands = 1;
	CHECK_INT(server_disconnect_cause(&l, &c, 500, true), SERVER_CAUSE_EXIT);
	CHECK_INT(server_disconnect_cause(&l, &c, 1999, false), SERVER_CAUSE_UNKNOWN);
	CHECK_INT(server_disconnect_cause(&l, &c, 3100, false), SERVER_CAUSE_IDLE);
	server_cause_text(SERVER_CAUSE_IDLE, &l, &c, 3100, text, sizeof(text));
	CHECK_STR(text, "idle limit reached (3 s idle on this connection, the server allows 2)");
	server_cause_text(SERVER_CAUSE_UNKNOWN, &l, &c, 1000, text, sizeof(text));
	CHECK_STR(text, "reason unknown (no limit was reached; requests sent: 1, idle: 1 s)");
}

UNIT_MAIN()
