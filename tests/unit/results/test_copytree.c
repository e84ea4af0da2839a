// SPDX-License-Identifier: MIT
/*
 * Moving a result folder (results/copytree.c) with real folders: a rename
 * within /tmp, and the copy across filesystems from /dev/shm (tmpfs) to
 * /tmp when they differ. Symlinks and FIFOs in the source are skipped,
 * never followed, and the source is gone afterwards.
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "results/copytree.h"
#include "unit.h"

static bool put_file(const char *dir, const char *name, const char *text, mode_t mode)
{
	char path[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return false;
	fputs(text, f);
	return fclose(f) == 0 && chmod(path, mode) == 0;
}

static const char *read_file(const char *dir, const char *name)
{
	static char buf[256];
	char path[600];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* lstat's mode of dir/name, 0 when it does not exist. */
static mode_t mode_of(const char *dir, const char *name)
{
	char path[600];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return lstat(path, &st) ? 0 : st.st_mode;
}

#define HOLE_SIZE (1 << 20)

/*
 * A PROF_-like tree under base/src: files (one 0640), a nested folder with
 * a big file, a file that ends in a hole (`truncate -s 1M`: no data at
 * all), a symlink to a file outside, a FIFO. `outside` is the file the
 * symlink points at.
 */
static bool make_tree(const char *base, const char *outside)
{
	char src[200], sub[220], path[256];
	static char big[200000];

	snprintf(src, sizeof(src), "%s/src", base);
	snprintf(sub, sizeof(sub), "%s/device_0/data", src);
	memset(big, 'b', sizeof(big) - 1);
	if (mkdir(src, 0750) || !put_file(src, "info.json", "{\"a\":1}", 0640) ||
	    !put_file(src, "hole.bin", "", 0644))
		return false;
	snprintf(path, sizeof(path), "%s/hole.bin", src);
	if (truncate(path, HOLE_SIZE))
		return false;
	snprintf(path, sizeof(path), "%s/device_0", src);
	if (mkdir(path, 0755) || mkdir(sub, 0700) || !put_file(sub, "big.bin", big, 0600))
		return false;
	snprintf(path, sizeof(path), "%s/link", src);
	if (symlink(outside, path))
		return false;
	snprintf(path, sizeof(path), "%s/fifo", src);
	return mkfifo(path, 0600) == 0;
}

/* Remove what the tests made (best effort: only known names). */
static void clean(const char *base, const char *dst, const char *outside)
{
	static const char *const names[] = { "device_0/data/big.bin",
					     "device_0/data",
					     "device_0",
					     "info.json",
					     "hole.bin",
					     "link",
					     "fifo",
					     NULL };
	char path[300];

	for (int w = 0; w < 2; w++) {
		char root[220];

		snprintf(root, sizeof(root), "%s", w ? dst : base);
		if (!w)
			snprintf(root, sizeof(root), "%s/src", base);
		for (int i = 0; names[i]; i++) {
			snprintf(path, sizeof(path), "%s/%s", root, names[i]);
			if (unlink(path))
				rmdir(path);
		}
		rmdir(root);
	}
	unlink(outside);
	rmdir(base);
}

/* What a moved tree must look like. */
static void check_moved(const char *src, const char *dst)
{
	char data[200];

	CHECK_INT(mode_of(src, ""), 0); /* the source is gone */
	CHECK_STR(read_file(dst, "info.json"), "{\"a\":1}");
	CHECK_INT(mode_of(dst, "info.json") & 07777, 0640);
	CHECK_INT(mode_of(dst, "device_0") & 07777, 0755);
	CHECK_INT(mode_of(dst, "device_0/data") & 07777, 0700);
	snprintf(data, sizeof(data), "%s/device_0/data", dst);
	CHECK(read_file(data, "big.bin") != NULL);
	CHECK_INT(mode_of(data, "big.bin") & S_IFMT, S_IFREG);
	{
		struct stat st;
		char big[300];

		snprintf(big, sizeof(big), "%s/big.bin", data);
		CHECK(stat(big, &st) == 0 && st.st_size == 199999);
		/* A hole at its end is copied as a hole, and the size kept. */
		snprintf(big, sizeof(big), "%s/hole.bin", dst);
		CHECK(stat(big, &st) == 0);
		CHECK_INT(st.st_size, HOLE_SIZE);
	}
}

static bool same_filesystem(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev;
}

TEST(same_filesystem_is_a_rename)
{
	char base[] = "/tmp/dynprof-copytree-XXXXXX", src[64], dst[64], outside[64];
	struct stat before, after;

	REQUIRE(mkdtemp(base) != NULL);
	snprintf(src, sizeof(src), "%s/src", base);
	snprintf(dst, sizeof(dst), "%s/dst", base);
	snprintf(outside, sizeof(outside), "%s-outside", base);
	REQUIRE(put_file("/", outside + 1, "secret", 0600));
	REQUIRE(make_tree(base, outside));
	REQUIRE(stat(src, &before) == 0);
	CHECK_INT(copytree_move(src, dst, ULLONG_MAX), 0);
	check_moved(src, dst);
	/* A rename keeps the very folder (its inode) and everything in it. */
	CHECK(stat(dst, &after) == 0 && after.st_ino == before.st_ino);
	CHECK_INT(mode_of(dst, "link") & S_IFMT, S_IFLNK);
	CHECK_INT(mode_of(dst, "fifo") & S_IFMT, S_IFIFO);
	clean(base, dst, outside);
}

TEST(across_filesystems_copies_skips_links_and_fifos_and_removes_the_source)
{
	char base[] = "/dev/shm/dynprof-copytree-XXXXXX", src[64], dst[64], outside[64];
	char dstbase[] = "/tmp/dynprof-copytree-dst-XXXXXX";

	REQUIRE(mkdtemp(base) != NULL);
	REQUIRE(mkdtemp(dstbase) != NULL);
	/* Without two filesystems this test cannot say anything: a FAIL, not a quiet pass. */
	REQUIRE(!same_filesystem(base, dstbase));
	snprintf(src, sizeof(src), "%s/src", base);
	snprintf(dst, sizeof(dst), "%s/dst", dstbase);
	snprintf(outside, sizeof(outside), "%s-outside", base);
	REQUIRE(put_file("/", outside + 1, "secret", 0600));
	REQUIRE(make_tree(base, outside));
	CHECK_INT(copytree_move(src, dst, ULLONG_MAX), 0);
	check_moved(src, dst);
	CHECK_INT(mode_of(dst, "") & 07777, 0750);
	/* Not followed: no copy of the link's target, no FIFO, and the target untouched. */
	CHECK_INT(mode_of(dst, "link"), 0);
	CHECK_INT(mode_of(dst, "fifo"), 0);
	CHECK_STR(read_file("/", outside + 1), "secret");
	clean(base, dst, outside);
	rmdir(dstbase);
}

TEST(existing_destination_and_missing_source_are_errors)
{
	char base[] = "/tmp/dynprof-copytree-XXXXXX", src[64], dst[64], outside[64];

	REQUIRE(mkdtemp(base) != NULL);
	snprintf(src, sizeof(src), "%s/src", base);
	snprintf(dst, sizeof(dst), "%s/dst", base);
	snprintf(outside, sizeof(outside), "%s-outside", base);
	CHECK_INT(copytree_move(src, dst, ULLONG_MAX), -ENOENT);
	REQUIRE(put_file("/", outside + 1, "secret", 0600));
	REQUIRE(make_tree(base, outside));
	REQUIRE(mkdir(dst, 0700) == 0);
	REQUIRE(put_file(dst, "info.json", "theirs", 0600));
	CHECK(copytree_move(src, dst, ULLONG_MAX) < 0);
	CHECK_STR(read_file(dst, "info.json"), "theirs");
	CHECK_STR(read_file(src, "info.json"), "{\"a\":1}");
	clean(base, dst, outside);
}

UNIT_MAIN()
