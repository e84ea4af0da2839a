// SPDX-License-Identifier: MIT
/*
 * What a file is, from one statx (common/fsident.c): its type, size and
 * identity by name and by fd alike, a final symlink never followed, the
 * mount id the same as an fd's, and a file on another mount told apart.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fsident.h"
#include "unit.h"

TEST(name_and_fd_give_the_same_file)
{
	char dir[] = "/tmp/dynprof-fsident-XXXXXX", path[64];
	struct fs_ident byname, byfd, link, d;
	int dfd, fd;

	REQUIRE(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/f", dir);
	REQUIRE((fd = open(path, O_CREAT | O_WRONLY, 0600)) >= 0);
	REQUIRE(write(fd, "12345", 5) == 5);
	REQUIRE((dfd = open(dir, O_PATH | O_DIRECTORY)) >= 0);
	REQUIRE(symlinkat("f", dfd, "l") == 0);
	CHECK_INT(fs_ident_at(dfd, "f", 0, &byname), 0);
	CHECK_INT(fs_ident_at(fd, "", AT_EMPTY_PATH, &byfd), 0);
	CHECK(S_ISREG(byname.mode));
	CHECK_INT(byname.size, 5);
	CHECK(byname.dev == byfd.dev && byname.ino == byfd.ino && byname.mnt == byfd.mnt);
	CHECK_INT(fs_ident_at(dfd, "l", 0, &link), 0);
	CHECK(S_ISLNK(link.mode));
	CHECK_INT(fs_ident_at(dfd, "nosuch", 0, &link), -ENOENT);
	CHECK_INT(fs_ident_at(dfd, "", AT_EMPTY_PATH, &d), 0);
	CHECK(S_ISDIR(d.mode));
	CHECK(fs_ident_same_mount(&byname, &d));
	CHECK(fs_mount_of(fd) == byname.mnt);
	unlinkat(dfd, "l", 0);
	unlinkat(dfd, "f", 0);
	close(fd);
	close(dfd);
	rmdir(dir);
}

/* /proc is a mount of its own: never the same mount as a file under /tmp. */
TEST(another_mount_is_told_apart)
{
	struct fs_ident proc, tmp;

	REQUIRE(fs_ident_at(AT_FDCWD, "/proc", 0, &proc) == 0);
	REQUIRE(fs_ident_at(AT_FDCWD, "/tmp", 0, &tmp) == 0);
	CHECK(!fs_ident_same_mount(&proc, &tmp));
	/* Same device, other mount ids: not the same mount (what a bind mount looks like). */
	tmp.dev = proc.dev;
	if (proc.mnt && tmp.mnt)
		CHECK(!fs_ident_same_mount(&proc, &tmp));
}

UNIT_MAIN()
