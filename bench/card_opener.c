// SPDX-License-Identifier: MIT
/*
 * card_opener NODE COUNT GAP_MS [close]: COUNT times, fork a child that opens NODE
 * and prints "<pid> <CLOCK_REALTIME µs just before it called open()>", holds
 * it GAP_MS, and exits. (Taken before the call: after it, the watcher may
 * already have printed, and a latency must not come out negative.) The detection-latency benchmark compares these
 * times with the ones dynprof --list --watch reports.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/*
 * With `close` the child then closes the fd and says when on stderr
 * ("<pid> <µs just before close()>"), and lives GAP_MS more: the close
 * latency of bench/open_hook.sh (found without a close event).
 */
static void child(const char *node, int gap_ms, int closing)
{
	long long t = now_us();
	int fd = open(node, O_RDONLY);

	if (fd < 0)
		_exit(1);
	printf("%d %lld\n", (int)getpid(), t);
	fflush(stdout);
	usleep((useconds_t)gap_ms * 1000);
	if (closing) {
		fprintf(stderr, "%d %lld\n", (int)getpid(), now_us());
		close(fd);
		usleep((useconds_t)gap_ms * 1000);
	}
	_exit(0);
}

int main(int argc, char **argv)
{
	int count = argc > 2 ? atoi(argv[2]) : 0, gap = argc > 3 ? atoi(argv[3]) : 50;
	int closing = argc > 4 && !strcmp(argv[4], "close");

	if (argc < 3 || count < 1) {
		fprintf(stderr, "usage: card_opener NODE COUNT [GAP_MS [close]]\n");
		return 2;
	}
	for (int i = 0; i < count; i++) {
		pid_t p = fork();

		if (p == 0)
			child(argv[1], gap, closing);
		if (p > 0)
			waitpid(p, NULL, 0);
	}
	return 0;
}
