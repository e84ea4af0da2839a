/* SPDX-License-Identifier: MIT */
/*
 * Which file a process has mapped for a library name: /proc/<pid>/maps,
 * and the path through which the host reaches that file even when the
 * process runs in another mount namespace (a container).
 */
#ifndef DYNPROF_LIBMAPS_H
#define DYNPROF_LIBMAPS_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

#include "shared/compiler.h"

struct libmaps_hit {
	char path[PATH_MAX];           /* as the process sees it */
	char host_path[PATH_MAX + 32]; /* /proc/<pid>/root<path>: the same file from here */
	bool executable;               /* the chosen mapping is executable (code) */
	bool deleted;                  /* " (deleted)": the file was replaced or removed since */
	unsigned long start, end; /* the chosen mapping's addresses: /proc/<pid>/map_files/<start>-<end> */
	unsigned dev_major, dev_minor; /* the mapped file's device and inode, as maps gives them */
	unsigned long inode;
};

/* One file mapping, as a maps line gives it (path cut in place in the line). */
struct libmaps_line {
	char *path;
	bool executable;
	bool deleted; /* " (deleted)" was there, and is cut off path */
	unsigned long start, end, inode;
	unsigned dev_major, dev_minor;
};

/*
 * "start-end perms offset dev inode   path": the path begins after the
 * blanks that follow the inode and runs to the end of the line (spaces
 * kept). False for mappings of no file ([heap], [vdso], anonymous memory)
 * and for what is not such a line.
 */
bool libmaps_parse_line(char *line, struct libmaps_line *m);

/* Cut a " (deleted)" suffix (the file was replaced or removed since it was mapped) off path: whether there was one. */
bool libmaps_cut_deleted(char *path);

/*
 * Does a mapped file's path answer to `lib`? A `lib` with '/' must equal
 * the path; else the path's last component equals `lib` or starts with
 * `lib` followed by '.' or '-' ("libfoo.so" answers for libfoo.so.1.2,
 * "libc" for libc.so.6 and libc-2.31.so, "demo_task" for the executable).
 */
bool libmaps_name_matches(const char *lib, const char *path);

/*
 * Pick `lib`'s mapping from maps text (the format of /proc/<pid>/maps) read
 * from `maps`: file mappings only; a live file before a deleted one, an
 * executable mapping before others, the first of equals. `pid` only makes
 * host_path. 0, -ENOENT when nothing answers, -ESTALE when only a deleted
 * file does (hit filled: a uprobe through the path would reach whatever
 * file has the name now, not the mapped one).
 */
int libmaps_scan(FILE *maps, int pid, const char *lib, struct libmaps_hit *hit) DP_MUST_CHECK;

/* libmaps_scan on /proc/<pid>/maps; also -ESRCH when there is no such process. */
int libmaps_find(int pid, const char *lib, struct libmaps_hit *hit) DP_MUST_CHECK;

#endif /* DYNPROF_LIBMAPS_H */
