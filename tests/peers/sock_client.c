// SPDX-License-Identifier: MIT
/*
 * sock_client: a raw client of a dynamic-profiling socket, for what dynprof
 * itself must never do.
 *
 *   sock_client connect-close ADDRESS
 *
 * Connects and closes without sending anything (CANN's server then ends
 * its accept loop for good). ADDRESS is a path, or "@name" for an abstract
 * name (bound with its exact length, no trailing NUL). Exits 0 once the
 * connection was made and closed, 1 when it could not be made.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	socklen_t alen;
	size_t n;
	int fd;

	if (argc != 3 || strcmp(argv[1], "connect-close")) {
		fprintf(stderr, "usage: sock_client connect-close ADDRESS\n");
		return 2;
	}
	n = strlen(argv[2]);
	if (n >= sizeof(a.sun_path)) {
		fprintf(stderr, "sock_client: address too long\n");
		return 2;
	}
	memcpy(a.sun_path, argv[2], n);
	if (argv[2][0] == '@') {
		a.sun_path[0] = '\0';
		alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	} else {
		alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
	}
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, alen) < 0) {
		perror("sock_client: connect");
		return 1;
	}
	close(fd);
	return 0;
}
