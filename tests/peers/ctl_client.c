// SPDX-License-Identifier: MIT
/*
 * ctl_client: a --control=unix:PATH client for tests.
 *
 *   ctl_client PATH COMMAND...
 *
 * Connects, sends each COMMAND as one line and prints the reply line that
 * answers it before sending the next. Exits 1 when the connection fails or
 * closes early, 2 on a reply that takes longer than 30 s.
 */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int connect_to(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		perror("ctl_client: connect");
		return -1;
	}
	return fd;
}

/* Read one line (up to '\n') into buf; 0, 1 closed, 2 timeout. */
static int read_line(int fd, char *buf, size_t len)
{
	size_t n = 0;

	while (n + 1 < len) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (poll(&p, 1, 30000) <= 0)
			return 2;
		if (read(fd, buf + n, 1) != 1)
			return 1;
		if (buf[n] == '\n')
			break;
		n++;
	}
	buf[n] = '\0';
	return 0;
}

int main(int argc, char **argv)
{
	char reply[4096];
	int fd;

	if (argc < 3) {
		fprintf(stderr, "usage: ctl_client PATH COMMAND...\n");
		return 2;
	}
	fd = connect_to(argv[1]);
	if (fd < 0)
		return 1;
	/*
	 * A refused client is sent one line and closed at once, maybe before
	 * our first command is written: that write must not kill us (SIGPIPE)
	 * before the refusal, still queued, is read.
	 */
	signal(SIGPIPE, SIG_IGN);
	for (int i = 2; i < argc; i++) {
		int rc;

		dprintf(fd, "%s\n", argv[i]);
		rc = read_line(fd, reply, sizeof(reply));
		if (rc)
			return rc;
		printf("%s\n", reply);
		fflush(stdout);
	}
	close(fd);
	return 0;
}
