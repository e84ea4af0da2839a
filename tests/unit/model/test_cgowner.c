// SPDX-License-Identifier: MIT
/*
 * The part of a cgroup path root made (model/cgowner.c), walked in a tree
 * of real folders made here with the owners and modes delegation gives
 * (as root: the suite runs as root).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/cgowner.h"
#include "unit.h"

#define USER_UID 4242

static char top[64];

/* top/<rel>, owned by uid with mode. */
static void folder(const char *rel, uid_t uid, mode_t mode)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	REQUIRE(mkdir(p, mode) == 0 || errno == EEXIST);
	REQUIRE(chown(p, uid, 0) == 0);
	REQUIRE(chmod(p, mode) == 0);
}

static struct cg_trust walk(const char *path, int *err)
{
	struct cg_trust t = { 99, 99 };
	int root = open(top, O_PATH | O_DIRECTORY);

	*err = cgowner_walk(root, path, strlen(path), &t);
	close(root);
	return t;
}

static void make_tree(void)
{
	snprintf(top, sizeof(top), "/tmp/dynprof-cgowner.XXXXXX");
	REQUIRE(mkdtemp(top));
	REQUIRE(chmod(top, 0755) == 0);
	folder("system.slice", 0, 0755);
	folder("system.slice/docker-x.scope", 0, 0755);
	folder("user.slice", 0, 0755);
	folder("user.slice/user@4242.service", USER_UID, 0755); /* delegated */
	folder("user.slice/user@4242.service/runc-trainjob.scope", USER_UID, 0755);
	folder("open", 0, 0777); /* root's, but anyone may make folders in it */
	folder("open/runc-x.scope", 0, 0755);
}

static void remove_tree(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", top);
	CHECK(system(cmd) == 0);
}

TEST(cgowner_walk_stops_where_root_stops_owning)
{
	struct cg_trust t;
	int err;

	if (geteuid() != 0) {
		printf("SKIP cgowner_walk_stops_where_root_stops_owning: needs root (chown)\n");
		return;
	}
	make_tree();
	t = walk("/system.slice/docker-x.scope", &err);
	CHECK_INT(err, 0);
	CHECK_INT((int)t.root_len, (int)strlen("/system.slice/docker-x.scope"));
	CHECK_INT((int)t.owner, 0);
	/* The delegated folder itself was made by root; what is inside, by its user. */
	t = walk("/user.slice/user@4242.service/runc-trainjob.scope", &err);
	CHECK_INT(err, 0);
	CHECK_INT((int)t.root_len, (int)strlen("/user.slice/user@4242.service"));
	CHECK_INT((int)t.owner, USER_UID);
	/* A folder others may write in: what is in it is no one's for sure. */
	t = walk("/open/runc-x.scope", &err);
	CHECK_INT((int)t.root_len, (int)strlen("/open"));
	CHECK_INT((int)t.owner, 0);
	/* Gone (the process moved): what was walked stays, no further. */
	t = walk("/system.slice/gone.scope/docker-y", &err);
	CHECK_INT(err, -ENOENT);
	CHECK_INT((int)t.root_len, (int)strlen("/system.slice"));
	/* Outside the namespace's root: nothing. */
	t = walk("/../system.slice", &err);
	CHECK_INT(err, -EINVAL);
	CHECK_INT((int)t.root_len, 0);
	t = walk("/", &err);
	CHECK_INT(err, 0);
	CHECK_INT((int)t.root_len, 0);
	remove_tree();
}

UNIT_MAIN()
