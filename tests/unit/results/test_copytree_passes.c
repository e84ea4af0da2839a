// SPDX-License-Identifier: MIT
/*
 * Moving a folder across filesystems (user/results/copytree.c), on a real
 * folder under /tmp. Two things a test machine will not do on its own are
 * made to happen here by defining renameat2, readdir and unlinkat in this
 * program (its definitions win over libc's for the code linked into it):
 * renameat2 can answer EXDEV, so the copy path runs on one filesystem; and
 * readdir can skip the entry after each removal, as removing entries while
 * reading a folder may make it do (older tmpfs), so removal needs more
 * than one pass.
 */
#include <dirent.h>
#include <signal.h>
#include <string.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "results/copytree.h"
#include "unit.h"

#define NFILES 40

static bool fake_exdev;        /* rename fails with EXDEV */
static bool skip_after_unlink; /* readdir skips one entry after each unlinkat */
static int unlinked_since_read, skipped;

int renameat2(int fromfd, const char *from, int tofd, const char *to, unsigned int flags)
{
	int (*real)(int, const char *, int, const char *, unsigned int) =
		(int (*)(int, const char *, int, const char *, unsigned int))dlsym(RTLD_NEXT, "renameat2");

	if (fake_exdev) {
		errno = EXDEV;
		return -1;
	}
	return real(fromfd, from, tofd, to, flags);
}

int unlinkat(int dirfd, const char *name, int flags)
{
	int (*real)(int, const char *, int) =
		(int (*)(int, const char *, int))dlsym(RTLD_NEXT, "unlinkat");
	int rc = real(dirfd, name, flags);

	if (rc == 0)
		unlinked_since_read++;
	return rc;
}

struct dirent *readdir(DIR *dir)
{
	struct dirent *(*real)(DIR *) = (struct dirent * (*)(DIR *)) dlsym(RTLD_NEXT, "readdir");
	struct dirent *de = real(dir);

	if (de && skip_after_unlink && unlinked_since_read) {
		unlinked_since_read = 0;
		skipped++;
		de = real(dir);
	}
	return de;
}

static void put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static bool file_says(const char *path, const char *text)
{
	char buf[64] = "";
	FILE *f = fopen(path, "r");

	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return !strcmp(buf, text);
}

/* src/f00..f39, src/host/end_info, a symlink: what a target might leave. */
static void make_tree(const char *src)
{
	char path[512];

	CHECK_INT(mkdir(src, 0750), 0);
	for (int i = 0; i < NFILES; i++) {
		snprintf(path, sizeof(path), "%s/f%02d", src, i);
		put_file(path, path + strlen(src));
	}
	snprintf(path, sizeof(path), "%s/host", src);
	CHECK_INT(mkdir(path, 0750), 0);
	snprintf(path, sizeof(path), "%s/host/end_info", src);
	put_file(path, "end");
	snprintf(path, sizeof(path), "%s/link", src);
	CHECK_INT(symlink("/etc/passwd", path), 0);
}

static void check_moved(const char *src, const char *dst, bool copied)
{
	char path[512], want[16];
	struct stat st;

	CHECK(stat(src, &st) < 0 && errno == ENOENT);
	for (int i = 0; i < NFILES; i++) {
		snprintf(path, sizeof(path), "%s/f%02d", dst, i);
		snprintf(want, sizeof(want), "/f%02d", i);
		CHECK(file_says(path, want));
	}
	snprintf(path, sizeof(path), "%s/host/end_info", dst);
	CHECK(file_says(path, "end"));
	snprintf(path, sizeof(path), "%s/link", dst);
	CHECK(copied ? lstat(path, &st) < 0 : lstat(path, &st) == 0); /* a copy leaves symlinks out */
}

static void move(bool exdev, bool skipping)
{
	char top[] = "/tmp/dynprof-copytree.XXXXXX", src[64], dst[64];

	if (!mkdtemp(top)) {
		CHECK(!"mkdtemp");
		return;
	}
	snprintf(src, sizeof(src), "%s/src", top);
	snprintf(dst, sizeof(dst), "%s/dst", top);
	make_tree(src);
	fake_exdev = exdev;
	skip_after_unlink = skipping;
	unlinked_since_read = skipped = 0;
	CHECK_INT(copytree_move(src, dst, ULLONG_MAX), 0);
	fake_exdev = skip_after_unlink = false;
	check_moved(src, dst, exdev);
	/* A failed check may leave files behind: remove the lot. */
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", top);
		CHECK_INT(system(cmd), 0);
	}
}

TEST(rename_on_one_filesystem)
{
	move(false, false);
}

TEST(copy_then_remove_across_filesystems)
{
	move(true, false);
}

TEST(removal_repeats_passes_when_readdir_skips_entries)
{
	move(true, true);
	CHECK(skipped > 0); /* the skipping did happen: later passes removed the rest */
}

/* A folder with one file: `data` bytes written at offset `at` of a file `size` long. */
static void one_file_tree(char *top, char *src, char *dst, size_t len, off_t size, off_t at, size_t data)
{
	char path[128], buf[4096];
	int fd;

	REQUIRE(mkdtemp(top));
	snprintf(src, len, "%s/src", top);
	snprintf(dst, len, "%s/dst", top);
	REQUIRE(mkdir(src, 0750) == 0);
	snprintf(path, sizeof(path), "%s/big", src);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0640);
	REQUIRE(fd >= 0);
	REQUIRE(ftruncate(fd, size) == 0);
	memset(buf, 'x', sizeof(buf));
	for (size_t done = 0; done < data; done += sizeof(buf))
		REQUIRE(pwrite(fd, buf, sizeof(buf), at + (off_t)done) == (ssize_t)sizeof(buf));
	close(fd);
}

static void remove_top(const char *top)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", top);
	CHECK_INT(system(cmd), 0);
}

TEST(sparse_file_is_copied_sparse_within_the_limit)
{
	char top[] = "/tmp/dynprof-copytree.XXXXXX", src[64], dst[64], path[128];
	struct stat st;

	/* 100 GiB long, 8 KiB of data at 1 GiB: a 1 MiB limit is enough. */
	one_file_tree(top, src, dst, sizeof(src), 100LL << 30, 1LL << 30, 8192);
	fake_exdev = true;
	CHECK_INT(copytree_move(src, dst, 1 << 20), 0);
	fake_exdev = false;
	snprintf(path, sizeof(path), "%s/big", dst);
	REQUIRE(stat(path, &st) == 0);
	CHECK(st.st_size == 100LL << 30);
	CHECK((long long)st.st_blocks * 512 < (1LL << 20)); /* not expanded */
	remove_top(top);
}

TEST(window_over_the_limit_is_left_whole)
{
	char top[] = "/tmp/dynprof-copytree.XXXXXX", src[64], dst[64], path[128];
	struct stat st;

	one_file_tree(top, src, dst, sizeof(src), 2 << 20, 0, 2 << 20);
	fake_exdev = true;
	CHECK_INT(copytree_move(src, dst, 1 << 20), -EFBIG);
	fake_exdev = false;
	snprintf(path, sizeof(path), "%s/big", src);
	CHECK(stat(path, &st) == 0 && st.st_size == 2 << 20); /* the source stays */
	CHECK(lstat(dst, &st) < 0);                           /* the part copied is gone */
	remove_top(top);
}

TEST(pending_sigterm_stops_the_copy)
{
	char top[] = "/tmp/dynprof-copytree.XXXXXX", src[64], dst[64], path[128];
	struct timespec zero = { 0, 0 };
	sigset_t set, old;
	struct stat st;

	one_file_tree(top, src, dst, sizeof(src), 1 << 20, 0, 1 << 20);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	REQUIRE(sigprocmask(SIG_BLOCK, &set, &old) == 0);
	REQUIRE(raise(SIGTERM) == 0); /* pending, as a signalfd user has it */
	fake_exdev = true;
	CHECK_INT(copytree_move(src, dst, ULLONG_MAX), -EINTR);
	fake_exdev = false;
	CHECK(sigtimedwait(&set, NULL, &zero) == SIGTERM);
	sigprocmask(SIG_SETMASK, &old, NULL);
	snprintf(path, sizeof(path), "%s/big", src);
	CHECK(stat(path, &st) == 0);
	CHECK(lstat(dst, &st) < 0);
	remove_top(top);
}

UNIT_MAIN()
