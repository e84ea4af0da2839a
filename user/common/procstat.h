/* SPDX-License-Identifier: MIT */
/*
 * The one parser of /proc/<pid>/stat (and /proc/<pid>/task/<tid>/stat)
 * lines: the fields dynprof uses, counted after the LAST ')' since comm
 * (field 2) may hold spaces and parentheses.
 */
#ifndef DYNPROF_PROCSTAT_H
#define DYNPROF_PROCSTAT_H

#include <stdbool.h>
#include <stdint.h>
#include "shared/compiler.h"

struct procstat {
	char state;     /* field 3: R, S, D, Z, X, ... */
	unsigned flags; /* field 9: the kernel's PF_* bits */
	uint64_t utime; /* field 14: user time in clock ticks */
	uint64_t stime; /* field 15: system time in clock ticks */
	uint64_t start; /* field 22: start time in clock ticks since boot */
	uint64_t vsize; /* field 23: bytes of address space; 0 when the line stops at 22 */
};

/*
 * 0, or -EINVAL when the text has no ')', fewer than 22 fields, or a
 * field 9, 14, 15, 22 or 23 that is not a whole decimal number.
 */
int procstat_parse(const char *text, struct procstat *st) DP_MUST_CHECK;

/*
 * Read and parse the stat file at `path`. -ESRCH when it cannot be opened
 * or read (the process or thread is gone), -EINVAL as procstat_parse.
 */
int procstat_read(const char *path, struct procstat *st) DP_MUST_CHECK;

/* A state letter of a process that is gone but for its entry (Z, X, x). */
bool procstat_dead(char state);

#endif /* DYNPROF_PROCSTAT_H */
