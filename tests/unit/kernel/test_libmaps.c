// SPDX-License-Identifier: MIT
/* libmaps.c: library names against mapped paths, and picking a mapping from maps text. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/libmaps.h"
#include "unit.h"

static const char MAPS[] =
	"55d0c0a00000-55d0c0a02000 r--p 00000000 08:01 131                        /usr/bin/demo_task\n"
	"55d0c0a02000-55d0c0a05000 r-xp 00002000 08:01 131                        /usr/bin/demo_task\n"
	"55d0c1000000-55d0c1021000 rw-p 00000000 00:00 0                          [heap]\n"
	"7f0000000000-7f0000020000 r--p 00000000 08:01 200                        /usr/lib/libfoo.so.1.2\n"
	"7f0000020000-7f0000040000 r-xp 00020000 08:01 200                        /usr/lib/libfoo.so.1.2\n"
	"7f0000100000-7f0000120000 r-xp 00000000 08:01 300                        /opt/my lib/libbar-2.0.so (deleted)\n"
	"7f0000200000-7f0000210000 r--p 00000000 08:01 400                        /old/libbaz.so (deleted)\n"
	"7f0000210000-7f0000220000 r--p 00000000 08:01 401                        /new/libbaz.so\n"
	"7f0000300000-7f0000301000 rw-p 00000000 00:00 0 \n"
	"7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]\n"
	"7ffd00100000-7ffd00102000 r-xp 00000000 00:00 0                          [vdso]\n";

/* libmaps_scan over MAPS: its return value, the hit in *hit. */
static int scan(const char *lib, struct libmaps_hit *hit)
{
	FILE *f = fmemopen((void *)MAPS, sizeof(MAPS) - 1, "r");
	int rc;

	if (!f)
		return -errno;
	rc = libmaps_scan(f, 4242, lib, hit);
	fclose(f);
	return rc;
}

/* libmaps_parse_line on a copy of `text`: whether it maps a file; its fields in *m, its path in path. */
static bool parse(const char *text, struct libmaps_line *m, char *path, size_t len)
{
	char line[512];
	bool ok;

	snprintf(line, sizeof(line), "%s", text);
	ok = libmaps_parse_line(line, m);
	snprintf(path, len, "%s", ok ? m->path : "");
	return ok;
}

TEST(maps_path_is_the_sixth_field_with_spaces_kept)
{
	struct libmaps_line m;
	char path[256];

	CHECK(parse("7f1c2a000000-7f1c2a021000 r-xp 00000000 08:01 1234   "
		    "/opt/My Ascend/x86_64-linux/lib64/libascendcl.so\n",
		    &m, path, sizeof(path)));
	CHECK_STR(path, "/opt/My Ascend/x86_64-linux/lib64/libascendcl.so");
}

TEST(maps_path_drops_deleted_suffix)
{
	struct libmaps_line m;
	char path[256];

	CHECK(parse("7f00-7f10 r-xp 00000000 08:01 99 /tmp/libdynprof_agent.so (deleted)", &m, path,
		    sizeof(path)));
	CHECK_STR(path, "/tmp/libdynprof_agent.so");
	CHECK(m.deleted);
}

TEST(maps_line_without_a_file_has_no_path)
{
	struct libmaps_line m;
	char path[256];

	CHECK(!parse("7ffd-7ffe rw-p 00000000 00:00 0          [stack]", &m, path, sizeof(path)));
	CHECK(!parse("7ffd-7ffe rw-p 00000000 00:00 0 ", &m, path, sizeof(path)));
}

TEST(maps_line_permissions_say_executable)
{
	struct libmaps_line m;
	char path[256];

	CHECK(parse("7f00-7f10 r-xp 00000000 08:01 99 /lib/x.so", &m, path, sizeof(path)) && m.executable);
	CHECK(parse("7f00-7f10 r--p 00000000 08:01 99 /lib/x.so", &m, path, sizeof(path)) &&
	      !m.executable);
	CHECK(parse("7f00-7f10 rw-p 00000000 08:01 99 /lib/x.so", &m, path, sizeof(path)) &&
	      !m.executable);
	CHECK(!parse("7f00-7f10", &m, path, sizeof(path)));
	CHECK(!parse("", &m, path, sizeof(path)));
}

TEST(names_match_basenames_and_versions)
{
	CHECK(libmaps_name_matches("libfoo.so", "/usr/lib/libfoo.so"));
	CHECK(libmaps_name_matches("libfoo.so", "/usr/lib/libfoo.so.1.2"));
	CHECK(libmaps_name_matches("libc", "/lib/x86_64-linux-gnu/libc.so.6"));
	CHECK(libmaps_name_matches("libc", "/lib/libc-2.31.so"));
	CHECK(libmaps_name_matches("demo_task", "/work/build/demo_task"));
	CHECK(!libmaps_name_matches("libc", "/lib/libcrypto.so.3"));
	CHECK(!libmaps_name_matches("libfoo.so", "/usr/lib/libfoo.solo"));
	CHECK(!libmaps_name_matches("foo", "/usr/lib/libfoo.so"));
	/* The folder part never counts for a name. */
	CHECK(!libmaps_name_matches("lib", "/usr/lib/x.so"));
	CHECK(!libmaps_name_matches("", "/usr/lib/x.so"));
}

TEST(paths_match_exactly)
{
	CHECK(libmaps_name_matches("/usr/lib/libfoo.so.1.2", "/usr/lib/libfoo.so.1.2"));
	CHECK(!libmaps_name_matches("/usr/lib/libfoo.so", "/usr/lib/libfoo.so.1.2"));
	CHECK(!libmaps_name_matches("lib/libfoo.so.1.2", "/usr/lib/libfoo.so.1.2"));
}

TEST(scan_prefers_the_executable_mapping)
{
	struct libmaps_hit *hit = calloc(1, sizeof(*hit));

	REQUIRE(hit != NULL);
	CHECK_INT(scan("libfoo.so", hit), 0);
	CHECK_STR(hit->path, "/usr/lib/libfoo.so.1.2");
	CHECK_STR(hit->host_path, "/proc/4242/root/usr/lib/libfoo.so.1.2");
	CHECK(hit->executable);
	CHECK(!hit->deleted);
	/* the chosen mapping's range (its map_files name) and the file's identity */
	CHECK(hit->start == 0x7f0000020000ul && hit->end == 0x7f0000040000ul);
	CHECK_INT(hit->dev_major, 8);
	CHECK_INT(hit->dev_minor, 1);
	CHECK(hit->inode == 200);
	CHECK_INT(scan("demo_task", hit), 0);
	CHECK_STR(hit->path, "/usr/bin/demo_task");
	CHECK(hit->executable);
	free(hit);
}

TEST(deleted_file_is_estale_with_its_path)
{
	struct libmaps_hit *hit = calloc(1, sizeof(*hit));

	REQUIRE(hit != NULL);
	CHECK_INT(scan("libbar", hit), -ESTALE);
	CHECK_STR(hit->path, "/opt/my lib/libbar-2.0.so");
	CHECK(hit->deleted);
	/* A live file of the same name wins over a deleted one, even not executable. */
	CHECK_INT(scan("libbaz.so", hit), 0);
	CHECK_STR(hit->path, "/new/libbaz.so");
	CHECK(!hit->deleted);
	free(hit);
}

TEST(unmapped_names_and_pseudo_mappings_are_enoent)
{
	struct libmaps_hit *hit = calloc(1, sizeof(*hit));

	REQUIRE(hit != NULL);
	CHECK_INT(scan("libnothing.so", hit), -ENOENT);
	CHECK_INT(scan("[heap]", hit), -ENOENT);
	CHECK_INT(scan("vdso", hit), -ENOENT);
	free(hit);
}

TEST(own_process_maps_its_executable)
{
	struct libmaps_hit *hit = calloc(1, sizeof(*hit));
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	CHECK(hit != NULL && n > 0);
	if (!hit || n <= 0) {
		free(hit);
		return;
	}
	exe[n] = '\0';
	CHECK_INT(libmaps_find(getpid(), exe, hit), 0);
	CHECK_STR(hit->path, exe);
	CHECK(hit->executable);
	CHECK_INT(libmaps_find(getpid(), "libnothing_at_all.so", hit), -ENOENT);
	CHECK_INT(libmaps_find(-1, "libc", hit), -ESRCH);
	free(hit);
}

UNIT_MAIN()
