// SPDX-License-Identifier: MIT
/* libmaps.h: a library's file among a process's mappings. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/libmaps.h"

#define DELETED_SUFFIX " (deleted)"

bool libmaps_name_matches(const char *lib, const char *path)
{
	const char *base;
	size_t len;

	if (!lib || !*lib || !path)
		return false;
	if (strchr(lib, '/'))
		return strcmp(lib, path) == 0;
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	len = strlen(lib);
	if (strncmp(base, lib, len) != 0)
		return false;
	return base[len] == '\0' || base[len] == '.' || base[len] == '-';
}

bool libmaps_cut_deleted(char *path)
{
	size_t len = strlen(path), d = strlen(DELETED_SUFFIX);

	if (len <= d || strcmp(path + len - d, DELETED_SUFFIX) != 0)
		return false;
	path[len - d] = '\0';
	return true;
}

bool libmaps_parse_line(char *line, struct libmaps_line *m)
{
	char perms[5];
	int n = -1;

	if (sscanf(line, "%lx-%lx %4s %*x %x:%x %lu %n", &m->start, &m->end, perms, &m->dev_major,
		   &m->dev_minor, &m->inode, &n) != 6 ||
	    n < 0)
		return false;
	m->path = line + n;
	if (m->path[0] != '/')
		return false;
	m->path[strcspn(m->path, "\n")] = '\0';
	m->deleted = libmaps_cut_deleted(m->path);
	m->executable = strlen(perms) >= 3 && perms[2] == 'x';
	return true;
}

/* How much a mapping is wanted: a live file first, then code. */
static int preference(const struct libmaps_line *m)
{
	return (m->deleted ? 0 : 2) + (m->executable ? 1 : 0);
}

static void fill_hit(struct libmaps_hit *hit, int pid, const struct libmaps_line *m)
{
	snprintf(hit->path, sizeof(hit->path), "%s", m->path);
	snprintf(hit->host_path, sizeof(hit->host_path), "/proc/%d/root%s", pid, m->path);
	hit->executable = m->executable;
	hit->deleted = m->deleted;
	hit->start = m->start;
	hit->end = m->end;
	hit->dev_major = m->dev_major;
	hit->dev_minor = m->dev_minor;
	hit->inode = m->inode;
}

int libmaps_scan(FILE *maps, int pid, const char *lib, struct libmaps_hit *hit)
{
	char *line = NULL;
	size_t cap = 0;
	int best = -1;

	while (getline(&line, &cap, maps) > 0) {
		struct libmaps_line m;

		if (!libmaps_parse_line(line, &m) || !libmaps_name_matches(lib, m.path))
			continue;
		if (preference(&m) <= best)
			continue;
		best = preference(&m);
		fill_hit(hit, pid, &m);
	}
	free(line);
	if (best < 0)
		return -ENOENT;
	return hit->deleted ? -ESTALE : 0;
}

int libmaps_find(int pid, const char *lib, struct libmaps_hit *hit)
{
	char path[64];
	FILE *f;
	int rc;

	if (pid <= 0)
		return -ESRCH;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	rc = libmaps_scan(f, pid, lib, hit);
	/*
	 * A process that has exited, or is exiting, reads as no mappings at all:
	 * say "no such process" rather than "not mapped" when it is gone.
	 */
	if (rc == -ENOENT && access(path, F_OK) != 0)
		rc = -ESRCH;
	fclose(f);
	return rc;
}
