// SPDX-License-Identifier: MIT
/*
 * stream_client: a --control=unix:PATH client that streams events.
 *
 *   stream_client PATH [HOLD_FILE]
 *
 * Connects, sends "events" and prints every line it reads, as it reads it,
 * until dynprof closes the connection (exit 0) or it is killed. With
 * HOLD_FILE it reads nothing (its receive buffer made as small as the
 * kernel allows) until that file exists: a reader that does not keep up.
 * Exits 1 when it cannot connect.
 */
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static int connect_to(const char *path, int rcvbuf)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd >= 0 && rcvbuf)
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		perror("stream_client: connect");
		return -1;
	}
	return fd;
}

int main(int argc, char **argv)
{
	const char *hold = argc > 2 ? argv[2] : NULL;
	struct stat st;
	char buf[65536];
	ssize_t n;
	int fd;

	if (argc < 2) {
		fprintf(stderr, "usage: stream_client PATH [HOLD_FILE]\n");
		return 2;
	}
	fd = connect_to(argv[1], hold ? 1 : 0);
	if (fd < 0 || write(fd, "events\n", 7) != 7)
		return 1;
	while (hold && stat(hold, &st) != 0)
		usleep(20000);
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		if (fwrite(buf, 1, (size_t)n, stdout) != (size_t)n)
			return 1;
		fflush(stdout);
	}
	return 0;
}
