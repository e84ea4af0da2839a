/* SPDX-License-Identifier: MIT */
/*
 * The host part of a window's PROF_ folder, laid out as CANN lays it out:
 * made at the window's start with host/, host/data/ (empty: only what
 * something really collected goes there) and the start-time control files
 * (sample.json, start_info, host_start.log, info.json), completed at its
 * end with end_info. Written by the agent (agent/profdir.c, its own
 * windows) and by dynprof for a target that serves no socket (its
 * host-only windows: hostdata/standin.c).
 */
#ifndef DYNPROF_SHARED_PROFHOST_H
#define DYNPROF_SHARED_PROFHOST_H

#include <limits.h>

#include "shared/compiler.h"

#define PROFHOST_MODE 0750

struct profhost {
	char path[PATH_MAX]; /* the PROF_ folder */
};

struct profhost_desc {
	long pid;            /* the process described: the name's pid and info.json's */
	const char *net_dev; /* its /proc/<pid>/net/dev (info.json's netCard) */
	int chip;            /* info.json's platform_version */
	int v1_name;         /* named as CANN's v1 names it (no pid, 16 letters) */
	const char *sample;  /* host/sample.json's text */
};

/*
 * Make `dir`/PROF_... (`dir` must exist) with a fresh name, host/ and
 * host/data/, and write the start-time control files. 0 or a negative
 * errno; on failure after mkdir the partial folder stays.
 */
int profhost_open(struct profhost *ph, const char *dir, const struct profhost_desc *d) DP_MUST_CHECK;

/*
 * The START's params as host/sample.json: msprof parses a folder for the
 * devices its sample.json names ("" gives nothing at all), and this one
 * holds host data: "devices" is the host's 64. Params CANN's lenient
 * parser took but that are no JSON object go as they came (CANN writes
 * them so; msprof could not read them either way). A malloc'd text, NULL
 * when out of memory.
 */
char *profhost_sample_json(const char *params);

/* Write the malloc'd `text` as the control file host/`name` (and its .done), freeing it. */
int profhost_write(const struct profhost *ph, const char *name, char *text) DP_MUST_CHECK;

/* Write end_info. 0 or a negative errno. */
int profhost_close(const struct profhost *ph) DP_MUST_CHECK;

#endif /* DYNPROF_SHARED_PROFHOST_H */
