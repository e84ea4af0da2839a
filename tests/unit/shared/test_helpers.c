// SPDX-License-Identifier: MIT
/* Small shared helpers: clock.c, mkdirp.c, errbuf.c, array_size.h. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/errbuf.h"
#include "shared/array_size.h"
#include "shared/clock.h"
#include "shared/mkdirp.h"
#include "unit.h"

/* ---- clock --------------------------------------------------------------- */

TEST(clocks_agree_with_the_system)
{
	struct timespec m, r;
	int64_t ms, wall;
	uint64_t ns;

	clock_gettime(CLOCK_MONOTONIC, &m);
	ns = clock_mono_ns();
	ms = clock_ms();
	clock_gettime(CLOCK_REALTIME, &r);
	wall = clock_wall_us();
	/* Same clocks, same units: within a second of a direct read. */
	CHECK(ns >= (uint64_t)m.tv_sec * 1000000000u + (uint64_t)m.tv_nsec);
	CHECK(ns - ((uint64_t)m.tv_sec * 1000000000u + (uint64_t)m.tv_nsec) < 1000000000u);
	CHECK(ms >= (int64_t)(ns / 1000000) && ms - (int64_t)(ns / 1000000) < 1000);
	CHECK(wall >= (int64_t)r.tv_sec * 1000000 && wall - (int64_t)r.tv_sec * 1000000 < 2000000);
}

TEST(ms_left_is_clamped)
{
	int64_t now = clock_ms();

	CHECK_INT(clock_ms_left(now - 5000), 0);
	CHECK(clock_ms_left(now + 5000) > 4000 && clock_ms_left(now + 5000) <= 5000);
	CHECK_INT(clock_ms_left(INT64_MAX / 2), 1000000000);
}

/* ---- mkdir -p ------------------------------------------------------------ */

static int is_dir(const char *path, mode_t *mode)
{
	struct stat st;

	if (stat(path, &st) || !S_ISDIR(st.st_mode))
		return 0;
	*mode = st.st_mode & 07777;
	return 1;
}

TEST(mkdir_p_makes_every_missing_part)
{
	char base[] = "/tmp/dynprof-mkdirp-XXXXXX", path[PATH_MAX], cmd[PATH_MAX + 16];
	mode_t mode = 0, old = umask(022);

	CHECK(mkdtemp(base) != NULL);
	snprintf(path, sizeof(path), "%s/a/b/c", base);
	CHECK_INT(mkdir_p(path, 0750), 0);
	CHECK(is_dir(path, &mode));
	CHECK_INT(mode, 0750);
	snprintf(path, sizeof(path), "%s/a/b", base);
	CHECK(is_dir(path, &mode));
	/* Again, and with a trailing slash: all there already. */
	CHECK_INT(mkdir_p(path, 0750), 0);
	snprintf(path, sizeof(path), "%s/a/b/c/", base);
	CHECK_INT(mkdir_p(path, 0750), 0);
	/* A file in the way of a part below it. */
	snprintf(path, sizeof(path), "%s/a/file", base);
	fclose(fopen(path, "w"));
	snprintf(path, sizeof(path), "%s/a/file/d", base);
	CHECK_INT(mkdir_p(path, 0750), -ENOTDIR);
	CHECK_INT(mkdir_p("", 0750), -ENOENT);
	umask(old);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", base);
	CHECK_INT(system(cmd), 0);
}

TEST(mkdir_p_refuses_a_path_past_path_max)
{
	static char path[PATH_MAX + 8];

	memset(path, 'a', sizeof(path) - 1);
	path[0] = '/';
	CHECK_INT(mkdir_p(path, 0750), -ENAMETOOLONG);
}

/* ---- errbuf -------------------------------------------------------------- */

TEST(errbuf_formats_cuts_and_returns_minus_one)
{
	char buf[8];

	CHECK_INT(errbuf_set(buf, sizeof(buf), "%s %d", "pid", 42), -1);
	CHECK_STR(buf, "pid 42");
	CHECK_INT(errbuf_set(buf, sizeof(buf), "too long: %d", 123456), -1);
	CHECK_STR(buf, "too lon");
	memcpy(buf, "keep", 5);
	CHECK_INT(errbuf_set(buf, 0, "x"), -1);
	CHECK_STR(buf, "keep");
	CHECK_INT(errbuf_set(NULL, 16, "x"), -1);
}

/* ---- ARRAY_SIZE ---------------------------------------------------------- */

TEST(array_size_counts_elements)
{
	static const char *const names[] = { "a", "b", "c" };
	long long wide[5];

	CHECK_INT(ARRAY_SIZE(names), 3);
	CHECK_INT(ARRAY_SIZE(wide), 5);
}

UNIT_MAIN()
