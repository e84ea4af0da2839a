// SPDX-License-Identifier: MIT
/*
 * swapper A B SECONDS: swap the names A and B (renameat2 RENAME_EXCHANGE)
 * as fast as it can for SECONDS, so whatever walks a folder holding them
 * sees each name as either thing at any moment: the race a hostile target
 * runs against a copy of its window. Prints how many swaps it made.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	struct timespec now, end;
	unsigned long swaps = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: swapper A B SECONDS\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += atoi(argv[3]);
	do {
		for (int i = 0; i < 1000; i++)
			if (renameat2(AT_FDCWD, argv[1], AT_FDCWD, argv[2], RENAME_EXCHANGE) == 0)
				swaps++;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec < end.tv_sec);
	printf("%lu swaps\n", swaps);
	return 0;
}
