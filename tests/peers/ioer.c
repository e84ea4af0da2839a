// SPDX-License-Identifier: MIT
/*
 * ioer: a target that writes and sends known amounts, for the
 * --host-sys=disk,network tests (the preloaded agent serves the protocol).
 *
 *   ioer NODE FILE DISK_BYTES NET_BYTES GO
 *
 * Opens NODE (a card: the agent then has a device), brings its network
 * namespace's loopback up (a fresh namespace's is down; failing is fine
 * where it is up already), prints "ioer: ready pid=<pid>", and polls every
 * 10 ms for the file GO. Then it writes DISK_BYTES of data to FILE (made
 * anew) in 64 KiB writes and fsyncs it, sends NET_BYTES over UDP to
 * itself on 127.0.0.1 in datagrams of 1000 bytes (each one read back),
 * prints "ioer: done datagrams=<n> disk_us=<the writing's and fsync's
 * time>" and waits for SIGTERM in sleeps of 10 ms (sleeps that end, none
 * a wait for I/O).
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define DGRAM 1000

static void lo_up(void)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (s < 0)
		return;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (!ioctl(s, SIOCGIFFLAGS, &ifr) && !(ifr.ifr_flags & IFF_UP)) {
		ifr.ifr_flags |= IFF_UP;
		(void)ioctl(s, SIOCSIFFLAGS, &ifr);
	}
	close(s);
}

static int disk(const char *file, long bytes)
{
	static char buf[65536];
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0)
		return -1;
	memset(buf, 'x', sizeof(buf));
	for (long left = bytes; left > 0;) {
		ssize_t n = write(fd, buf, left < (long)sizeof(buf) ? (size_t)left : sizeof(buf));

		if (n <= 0)
			return -1;
		left -= n;
	}
	return fsync(fd) || close(fd) ? -1 : 0;
}

static long net(long bytes)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	char buf[DGRAM];
	long n = 0;
	int rx = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int tx = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (rx < 0 || tx < 0 || bind(rx, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(rx, (struct sockaddr *)&a, &alen))
		return -1;
	memset(buf, 'n', sizeof(buf));
	for (long left = bytes; left > 0; left -= DGRAM, n++)
		if (sendto(tx, buf, DGRAM, 0, (struct sockaddr *)&a, sizeof(a)) != DGRAM ||
		    recv(rx, buf, sizeof(buf), 0) != DGRAM)
			return -1;
	close(rx);
	close(tx);
	return n;
}

int main(int argc, char **argv)
{
	struct timespec ms10 = { 0, 10000000 }, t0, t1;
	sigset_t term;
	long n;

	if (argc != 6) {
		fprintf(stderr, "usage: ioer NODE FILE DISK_BYTES NET_BYTES GO\n");
		return 2;
	}
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigaddset(&term, SIGINT);
	sigprocmask(SIG_BLOCK, &term, NULL);
	if (open(argv[1], O_RDONLY | O_CLOEXEC) < 0) {
		perror("ioer: open");
		return 1;
	}
	lo_up();
	printf("ioer: ready pid=%d\n", (int)getpid());
	fflush(stdout);
	while (access(argv[5], F_OK))
		nanosleep(&ms10, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (disk(argv[2], atol(argv[3]))) {
		perror("ioer: disk");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	n = net(atol(argv[4]));
	if (n < 0) {
		perror("ioer: net");
		return 1;
	}
	printf("ioer: done datagrams=%ld disk_us=%lld\n", n,
	       (long long)(t1.tv_sec - t0.tv_sec) * 1000000 + (t1.tv_nsec - t0.tv_nsec) / 1000);
	fflush(stdout);
	/* Asleep till the end, woken every 10 ms: sleeps that end, none a wait for I/O. */
	while (sigtimedwait(&term, NULL, &ms10) < 0)
		;
	return 0;
}
