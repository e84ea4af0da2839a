/* SPDX-License-Identifier: MIT */
/* Whole non-negative numbers from command-line options, for the bundled programs. */
#ifndef DYNPROF_CLI_NUMBER_H
#define DYNPROF_CLI_NUMBER_H

#include <errno.h>
#include <limits.h>
#include <stdlib.h>

/* 0 and *out for "0".."INT_MAX" with nothing else; -1 otherwise. */
static inline int cli_parse_count(const char *text, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(text, &end, 10);
	return errno || !*text || *end || *out < 0 || *out > INT_MAX ? -1 : 0;
}

#endif /* DYNPROF_CLI_NUMBER_H */
