// SPDX-License-Identifier: MIT
/*
 * card_job NODE HOLD_MS [MAPPINGS]: a short AI job for the follow-mode
 * benchmarks (bench/follow.sh, bench/soak.sh). Run with LD_PRELOAD of the agent and
 * PROFILING_MODE=dynamic, its socket listens from the constructor on; it
 * prints "<pid> <CLOCK_REALTIME µs just before open()>" (before: a
 * watcher may have joined it by the time open returns), opens NODE,
 * holds it HOLD_MS and exits through exit(), so the agent's exit hook runs.
 * MAPPINGS: that many more file mappings first (pages of its own
 * executable, each its own line in /proc/<pid>/maps), as a real AI
 * process has thousands (its Python modules, the framework's libraries):
 * whatever a join reads of the maps costs in proportion. In fours, as a
 * library's segments are mapped: read, read+exec, read, read+write.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* n mappings of one page of the executable (neighbours differ in protection: never merged). */
static int map_many(int n)
{
	static const int prot[4] = { PROT_READ, PROT_READ | PROT_EXEC, PROT_READ, PROT_READ | PROT_WRITE };
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	for (int i = 0; i < n; i++)
		if (mmap(NULL, 4096, prot[i % 4], MAP_PRIVATE, fd, 0) == MAP_FAILED) {
			close(fd);
			return -1;
		}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	int hold = argc > 2 ? atoi(argv[2]) : -1, fd;
	long long t;

	if (argc < 3 || hold < 0) {
		fprintf(stderr, "usage: card_job NODE HOLD_MS [MAPPINGS]\n");
		return 2;
	}
	if (argc > 3 && map_many(atoi(argv[3]))) {
		perror("mmap");
		return 1;
	}
	t = now_us();
	fd = open(argv[1], O_RDONLY);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	printf("%d %lld\n", (int)getpid(), t);
	fflush(stdout);
	usleep((useconds_t)hold * 1000);
	close(fd);
	return 0;
}
