// SPDX-License-Identifier: MIT
/*
 * The host-side rules of issue 15 that need no other user: files in a
 * target's filesystem opened non-blocking and only when regular; CANN's
 * exact PROF_ name patterns; files in --output made with O_EXCL, never
 * through a symlink, an existing one used only when it is dynprof's own.
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/rootfile.h"
#include "results/copytree.h"
#include "report/escape.h"
#include "results/output.h"
#include "proc/procfs.h"
#include "unit.h"

static char dir[64];

static int root_fd(void)
{
	snprintf(dir, sizeof(dir), "/tmp/dp-hostile.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	return open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

static void path_in(char *out, size_t len, const char *name)
{
	snprintf(out, len, "%s/%s", dir, name);
}

TEST(fifo_in_a_root_is_refused_without_blocking)
{
	char p[128];
	int root = root_fd();

	path_in(p, sizeof(p), "passwd");
	REQUIRE(mkfifo(p, 0600) == 0);
	/* Without O_NONBLOCK this open would wait for a writer forever. */
	CHECK_INT(rootfile_open(root, "/passwd"), -ROOTFILE_ENOTREG);
	CHECK_STR(rootfile_strerror(-ROOTFILE_ENOTREG), "not a regular file, refused");
	unlink(p);
	rmdir(dir);
	close(root);
}

TEST(device_folder_and_symlink_in_a_root_are_refused)
{
	char p[128];
	int root = root_fd();

	path_in(p, sizeof(p), "link");
	REQUIRE(symlink("/etc/hostname", p) == 0);
	CHECK_INT(rootfile_open(root, "/link"), -ELOOP);
	path_in(p, sizeof(p), "sub");
	REQUIRE(mkdir(p, 0700) == 0);
	CHECK_INT(rootfile_open(root, "/sub"), -ROOTFILE_ENOTREG);
	/* A device reached through the root: /dev/zero reads forever. */
	CHECK_INT(rootfile_check_regular(open("/dev/zero", O_RDONLY | O_CLOEXEC)), -ROOTFILE_ENOTREG);
	path_in(p, sizeof(p), "link");
	unlink(p);
	path_in(p, sizeof(p), "sub");
	rmdir(p);
	rmdir(dir);
	close(root);
}

TEST(regular_file_in_a_root_is_read)
{
	char p[128], *buf;
	size_t n;
	int root = root_fd(), fd;
	FILE *f;

	path_in(p, sizeof(p), "version.info");
	REQUIRE((f = fopen(p, "w")));
	fputs("Version=9.0.0\n", f);
	fclose(f);
	fd = rootfile_open(root, "/version.info");
	REQUIRE(fd >= 0);
	CHECK_INT(rootfile_read(fd, 64, &buf, &n), 0);
	CHECK_STR(buf, "Version=9.0.0\n");
	free(buf);
	close(fd);
	unlink(p);
	rmdir(dir);
	close(root);
}

TEST(prof_names_match_cann_exactly)
{
	CHECK(output_is_v2_prof_name("PROF_000001_20260101120000123_00004242ABCDEFGH"));
	CHECK(output_is_v1_prof_name("PROF_000001_20260101120000123_ABCDEFGHIJKLMNOP"));
	CHECK(!output_is_v1_prof_name("PROF_000001_20260101120000123_00004242ABCDEFGH"));
	CHECK(!output_is_v2_prof_name("PROF_000001_20260101120000123_ABCDEFGHIJKLMNOP"));
	/* letters past R, lower case, a newline, one short, one long, a slash */
	CHECK(!output_is_v2_prof_name("PROF_000001_20260101120000123_00004242ABCDEFGS"));
	CHECK(!output_is_v2_prof_name("PROF_000001_20260101120000123_00004242abcdefgh"));
	CHECK(!output_is_v2_prof_name("PROF_000001_2026010112000\n123_00004242ABCDEFGH"));
	CHECK(!output_is_v2_prof_name("PROF_000001_20260101120000123_00004242ABCDEFG"));
	CHECK(!output_is_v2_prof_name("PROF_000001_20260101120000123_00004242ABCDEFGHA"));
	CHECK(!output_is_v1_prof_name("PROF_000001_20260101120000123/ABCDEFGHIJKLMNOP"));
	CHECK(!output_is_v2_prof_name("PROF_x\n[INFO] forged_00004242ABCDEFGH"));
}

TEST(output_file_is_made_exclusively_and_never_through_a_symlink)
{
	char p[128], target[128];
	struct stat st;
	int root = root_fd(), fd;

	close(root);
	path_in(target, sizeof(target), "elsewhere");
	path_in(p, sizeof(p), "rec");
	REQUIRE(symlink(target, p) == 0);
	CHECK_INT(output_open_file(dir, "rec"), -ELOOP);
	CHECK(lstat(target, &st) != 0); /* nothing made at the link's target */
	unlink(p);
	fd = output_open_file(dir, "rec");
	REQUIRE(fd >= 0);
	REQUIRE(fstat(fd, &st) == 0);
	CHECK_INT(st.st_mode & 0777, 0640);
	close(fd);
	fd = output_open_file(dir, "rec"); /* ours: opened again to append */
	CHECK(fd >= 0);
	close(fd);
	path_in(target, sizeof(target), "hard");
	REQUIRE(link(p, target) == 0); /* two links: not only ours any more */
	CHECK_INT(output_open_file(dir, "rec"), -EPERM);
	unlink(target);
	unlink(p);
	REQUIRE(mkfifo(p, 0600) == 0);
	CHECK(output_open_file(dir, "rec") < 0); /* FIFO: no reader, never blocks */
	unlink(p);
	rmdir(dir);
}

TEST(escape_leaves_plain_text_and_escapes_the_rest)
{
	char out[128];

	CHECK_INT(text_escape("/home/u/PROF_1 x", out, sizeof(out)), 16);
	CHECK_STR(out, "/home/u/PROF_1 x");
	CHECK(text_is_plain("abc ~"));
	text_escape("\x1b]0;t\a\n[INFO] x\\y\x7f\xc2\x9b\t", out, sizeof(out));
	CHECK_STR(out, "\\x1b]0;t\\x07\\x0a[INFO] x\\y\\x7f\\xc2\\x9b\\x09");
	CHECK(!text_is_plain("a\nb"));
	CHECK(text_is_plain("a\\b"));
}

TEST(escape_truncates_whole_escapes_only)
{
	char out[6];

	/* "ab\x0a" needs 6 + NUL: only "ab" fits whole; nothing after it. */
	CHECK_INT(text_escape("ab\ncd", out, sizeof(out)), 8);
	CHECK_STR(out, "ab");
	CHECK_INT(text_escape("\n", NULL, 0), 4);
	{
		char *d = text_escape_dup("q\x01");

		REQUIRE(d);
		CHECK_STR(d, "q\\x01");
		free(d);
	}
}

TEST(copytree_never_moves_a_symlink_or_replaces_a_destination)
{
	char src[128], dst[128], real[128];
	struct stat st;
	int root = root_fd();

	close(root);
	path_in(real, sizeof(real), "real");
	path_in(src, sizeof(src), "PROF_link");
	path_in(dst, sizeof(dst), "out");
	REQUIRE(mkdir(real, 0700) == 0);
	REQUIRE(symlink(real, src) == 0);
	CHECK_INT(copytree_move(src, dst, ULLONG_MAX), -ENOTDIR);
	CHECK(lstat(dst, &st) != 0);
	CHECK(lstat(src, &st) == 0 && S_ISLNK(st.st_mode)); /* left where it was */
	unlink(src);
	/* An empty folder planted at the destination is not replaced. */
	REQUIRE(mkdir(dst, 0700) == 0);
	CHECK_INT(copytree_move(real, dst, ULLONG_MAX), -EEXIST);
	CHECK(stat(real, &st) == 0);
	rmdir(dst);
	rmdir(real);
	rmdir(dir);
}

UNIT_MAIN()
