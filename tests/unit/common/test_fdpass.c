// SPDX-License-Identifier: MIT
/*
 * A message with an fd along (common/fdpass.c), over a real socketpair:
 * the fd arrives as the same open file, close-on-exec; none sent, none
 * received; of several sent at once, one is handed over, the others closed.
 */
#include <dirent.h>
#include <stdbool.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fdpass.h"
#include "unit.h"

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static bool same_file(int a, int b)
{
	struct stat x, y;

	return fstat(a, &x) == 0 && fstat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

TEST(fd_and_bytes_arrive_together)
{
	int sv[2], p[2], fd = -2;
	char out[8] = "", in[8] = "hello";

	REQUIRE(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
	REQUIRE(pipe(p) == 0);
	CHECK_INT(fdpass_send(sv[0], in, 6, p[0], MSG_NOSIGNAL), 6);
	CHECK_INT(fdpass_recv(sv[1], out, sizeof(out), 0, &fd), 6);
	CHECK_STR(out, "hello");
	REQUIRE(fd >= 0);
	CHECK(fd != p[0] && same_file(fd, p[0]));
	CHECK(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
	CHECK_INT(fdpass_send(sv[0], "x", 1, -1, MSG_NOSIGNAL), 1);
	CHECK_INT(fdpass_recv(sv[1], out, sizeof(out), 0, &fd), 1);
	CHECK_INT(fd, -1);
	close(p[0]), close(p[1]), close(sv[0]), close(sv[1]);
}

/* A peer sending two fds in one message: the first is ours, the second is not left open. */
TEST(extra_fds_are_closed)
{
	int sv[2], p[2], fd = -2, fds[2];
	char ctl[CMSG_SPACE(sizeof(fds))] = { 0 }, byte = 'x';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl)
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	int before;

	REQUIRE(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
	REQUIRE(pipe(p) == 0);
	fds[0] = p[0];
	fds[1] = p[1];
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(c), fds, sizeof(fds));
	REQUIRE(sendmsg(sv[0], &msg, MSG_NOSIGNAL) == 1);
	before = open_fds();
	CHECK_INT(fdpass_recv(sv[1], &byte, 1, 0, &fd), 1);
	REQUIRE(fd >= 0);
	CHECK(same_file(fd, p[0]));
	CHECK_INT(open_fds(), before + 1);
	close(fd), close(p[0]), close(p[1]), close(sv[0]), close(sv[1]);
}

UNIT_MAIN()
