// SPDX-License-Identifier: MIT
/*
 * A server's connections looked at through copies of its fds
 * (sock/sockheld.c): the address text as /proc/net/unix prints it, from
 * crafted addresses; and the live-client rule on real sockets of this
 * process (a listener, its accepted connection with the client there,
 * half-closed, gone; a TCP socket; another path; a reused fd number).
 */
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "sock/sockheld.h"
#include "unit.h"

static socklen_t addr_of(struct sockaddr_un *a, const char *bytes, size_t n)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	memcpy(a->sun_path, bytes, n);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
}

TEST(sockheld_path_is_printed_without_its_nul)
{
	struct sockaddr_un a;
	char out[128];
	socklen_t len = addr_of(&a, "/root/dynamic_profiling_socket_42", 34); /* with its NUL */

	CHECK_INT(sockheld_addr_text(&a, len, out, sizeof(out)), 0);
	CHECK_STR(out, "/root/dynamic_profiling_socket_42");
	/* Bound without the NUL counted: the same text. */
	CHECK_INT(sockheld_addr_text(&a, len - 1, out, sizeof(out)), 0);
	CHECK_STR(out, "/root/dynamic_profiling_socket_42");
}

TEST(sockheld_abstract_name_has_at_and_nuls_as_at)
{
	struct sockaddr_un a;
	char out[128];

	CHECK_INT(sockheld_addr_text(&a, addr_of(&a, "\0dyn_prof_sock_7", 16), out, sizeof(out)), 0);
	CHECK_STR(out, "@dyn_prof_sock_7");
	CHECK_INT(sockheld_addr_text(&a, addr_of(&a, "\0a\0b", 4), out, sizeof(out)), 0);
	CHECK_STR(out, "@a@b");
}

TEST(sockheld_unnamed_short_foreign_and_too_long)
{
	struct sockaddr_un a;
	struct sockaddr_in in = { .sin_family = AF_INET };
	char out[8];

	CHECK_INT(sockheld_addr_text(&a, addr_of(&a, "", 0), out, sizeof(out)), -ENOENT);
	CHECK_INT(sockheld_addr_text(&a, 1, out, sizeof(out)), -EINVAL);
	CHECK_INT(sockheld_addr_text((const struct sockaddr_un *)&in, sizeof(in), out, sizeof(out)),
		  -EINVAL);
	CHECK_INT(sockheld_addr_text(&a, addr_of(&a, "/1234567", 9), out, sizeof(out)), -ENAMETOOLONG);
	CHECK_INT(sockheld_addr_text(&a, addr_of(&a, "/123456", 8), out, sizeof(out)), 0);
	CHECK_STR(out, "/123456");
	CHECK_INT(sockheld_addr_text(&a,
				     addr_of(&a,
					     "\0"
					     "1234567",
					     8),
				     out, sizeof(out)),
		  -ENAMETOOLONG);
	/* A length past the struct (getsockname says the whole size): cut to it. */
	memset(a.sun_path, 'x', sizeof(a.sun_path));
	{
		char big[sizeof(a.sun_path) + 2];

		CHECK_INT(sockheld_addr_text(&a, sizeof(a) + 40, big, sizeof(big)), 0);
		CHECK_INT(strlen(big), sizeof(a.sun_path));
	}
}

/* A listener on a fresh path, a client connected and accepted. */
struct conn {
	char path[64];
	int listener, client, accepted;
};

static int open_conn(struct conn *c)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };

	snprintf(c->path, sizeof(c->path), "/tmp/test_sockheld.%d", (int)getpid());
	unlink(c->path);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", c->path);
	c->listener = socket(AF_UNIX, SOCK_STREAM, 0);
	c->client = socket(AF_UNIX, SOCK_STREAM, 0);
	if (c->listener < 0 || c->client < 0 || bind(c->listener, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(c->listener, 4) || connect(c->client, (struct sockaddr *)&a, sizeof(a)))
		return -1;
	c->accepted = accept(c->listener, NULL, NULL);
	return c->accepted < 0 ? -1 : 0;
}

static void close_conn(struct conn *c)
{
	close(c->listener);
	if (c->client >= 0)
		close(c->client);
	close(c->accepted);
	unlink(c->path);
}

static struct sockheld_fd fd_of(int fd)
{
	struct stat st;

	return (struct sockheld_fd){ .fd = fd, .ino = fstat(fd, &st) ? 0 : (unsigned long)st.st_ino };
}

static int live(const struct sockheld_fd *f, int n, const char *path)
{
	return sockheld_live_client((int)getpid(), f, n, path);
}

TEST(sockheld_accepted_with_its_client_there_is_live)
{
	struct conn c;
	struct sockheld_fd f[2];

	REQUIRE(open_conn(&c) == 0);
	f[0] = fd_of(c.listener);
	f[1] = fd_of(c.accepted);
	CHECK_INT(live(f, 1, c.path), 0); /* the listener alone */
	CHECK_INT(live(f, 2, c.path), 1);
	CHECK_INT(live(f + 1, 1, "/tmp/another_path"), 0);
	/* The client's own end has no address: not a server's connection. */
	f[0] = fd_of(c.client);
	CHECK_INT(live(f, 1, c.path), 0);
	/* Half-closed by the client: still there (it reads our replies). */
	REQUIRE(shutdown(c.client, SHUT_WR) == 0);
	CHECK_INT(live(f + 1, 1, c.path), 1);
	close_conn(&c);
}

TEST(sockheld_accepted_whose_client_left_is_stale)
{
	struct conn c;
	struct sockheld_fd f;

	REQUIRE(open_conn(&c) == 0);
	f = fd_of(c.accepted);
	close(c.client);
	c.client = -1;
	/* CANN keeps such a socket open: it must not read as a client. */
	CHECK_INT(live(&f, 1, c.path), 0);
	close_conn(&c);
}

TEST(sockheld_shut_down_both_ways_is_stale)
{
	struct conn c;
	struct sockheld_fd f;

	REQUIRE(open_conn(&c) == 0);
	f = fd_of(c.accepted);
	REQUIRE(shutdown(c.client, SHUT_RDWR) == 0);
	CHECK_INT(live(&f, 1, c.path), 0);
	close_conn(&c);
}

TEST(sockheld_other_sockets_and_reused_numbers_are_not_clients)
{
	struct conn c;
	struct sockheld_fd f[2];
	int tcp = socket(AF_INET, SOCK_STREAM, 0);

	REQUIRE(tcp >= 0);
	REQUIRE(open_conn(&c) == 0);
	f[0] = fd_of(tcp);
	CHECK_INT(live(f, 1, c.path), 0);
	/* The fd number now names another socket than the one the walk saw. */
	f[1] = fd_of(c.accepted);
	f[1].ino += 1;
	CHECK_INT(live(f + 1, 1, c.path), 0);
	/* A closed fd is skipped, the next one still looked at. */
	f[0] = (struct sockheld_fd){ .fd = 1000000, .ino = 1 };
	f[1] = fd_of(c.accepted);
	CHECK_INT(live(f, 2, c.path), 1);
	close(tcp);
	close_conn(&c);
}

TEST(sockheld_gone_process)
{
	struct sockheld_fd f = { .fd = 0, .ino = 1 };

	CHECK_INT(sockheld_live_client(0x3ffffff0, &f, 1, "/x"), -ESRCH);
}

UNIT_MAIN()
