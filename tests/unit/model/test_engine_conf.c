// SPDX-License-Identifier: MIT
/* Engines' configuration and state (model/engine_conf.c): storage.conf, containerd's cgroups. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/engine_conf.h"
#include "unit.h"

TEST(storage_conf_storage_table_only)
{
	struct storage_conf c;

	storage_conf_parse("# podman's\n[storage]\ndriver = \"vfs\"  # no fuse here\n"
			   "runroot = \"/run/x\"\n  graphroot=\"/data/containers\"\n"
			   "[storage.options]\ngraphroot = \"/elsewhere\"\ndriver = \"btrfs\"\n",
			   &c);
	CHECK_STR(c.graphroot, "/data/containers");
	CHECK_STR(c.driver, "vfs");
}

TEST(storage_conf_refuses_odd_values)
{
	struct storage_conf c;

	storage_conf_parse("[storage]\ndriver = \"../x\"\ngraphroot = \"relative\"\n", &c);
	CHECK_STR(c.graphroot, "");
	CHECK_STR(c.driver, "");
	storage_conf_parse("driver = \"vfs\"\n", &c); /* outside [storage] */
	CHECK_STR(c.driver, "");
	storage_conf_parse("", &c);
	CHECK_STR(c.graphroot, "");
}

TEST(storage_places_every_driver_once_conf_driver_first)
{
	char path[256], root[4096], rel[256], seen[1024] = "";
	int i;
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/dynprof-unit-storage.%d.conf", (int)getpid());
	f = fopen(path, "w");
	REQUIRE(f);
	fputs("[storage]\ndriver = \"btrfs\"\ngraphroot = \"/g\"\n", f);
	fclose(f);
	setenv("DYNPROF_STORAGE_CONF", path, 1);
	unsetenv("DYNPROF_STORAGE_ROOT");
	for (i = 0; !storage_place(i, "/dflt", root, sizeof(root), rel, sizeof(rel)); i++) {
		CHECK_STR(root, "/g");
		strcat(seen, rel);
		strcat(seen, " ");
	}
	CHECK_STR(seen, "btrfs-containers/containers.json overlay-containers/containers.json "
			"vfs-containers/containers.json zfs-containers/containers.json "
			"devmapper-containers/containers.json aufs-containers/containers.json ");
	setenv("DYNPROF_STORAGE_ROOT", "/env", 1);
	CHECK(!storage_place(0, "/dflt", root, sizeof(root), rel, sizeof(rel)));
	CHECK_STR(root, "/env");
	unsetenv("DYNPROF_STORAGE_ROOT");
	unlink(path);
	CHECK(!storage_place(0, "/dflt", root, sizeof(root), rel, sizeof(rel)));
	CHECK_STR(root, "/dflt");
	CHECK_STR(rel, "overlay-containers/containers.json");
	unsetenv("DYNPROF_STORAGE_CONF");
}

static const char *cand(const char *text)
{
	static char name[160];

	if (containerd_task_candidate(text, name, sizeof(name)))
		return "-";
	return name;
}

TEST(containerd_namespace_and_id_from_the_cgroup)
{
	CHECK_STR(cand("9:name=systemd:/default/trainjob\n8:pids:/default/trainjob\n0::/default/trainjob\n"),
		  "default/trainjob");
	CHECK_STR(cand("0::/dpt1/job-1.x_2\n"), "dpt1/job-1.x_2");
	/* Not that shape: top level alone (runc's), deeper, the host, odd characters. */
	CHECK_STR(cand("0::/trainjob\n"), "-");
	CHECK_STR(cand("0::/a/b/c\n"), "-");
	CHECK_STR(cand("0::/\n"), "-");
	CHECK_STR(cand("0::/default/-x\n"), "-");
	CHECK_STR(cand("0::/default/a..b\n"), "-");
	CHECK_STR(cand("0::/default/a b\n"), "-");
	CHECK_STR(cand("0::/default/\n"), "-");
}

TEST(containerd_name_needs_the_bundle)
{
	char name[160], dir[256];

	snprintf(dir, sizeof(dir), "/tmp/dynprof-unit-ctrd.%d", (int)getpid());
	setenv("DYNPROF_CONTAINERD_STATE", dir, 1);
	CHECK(containerd_task_name("0::/ns1/job\n", name, sizeof(name)) == -ENOENT);
	CHECK_STR(name, "");
	REQUIRE(!mkdir(dir, 0700));
	char sub[512];
	snprintf(sub, sizeof(sub), "%s/io.containerd.runtime.v2.task", dir);
	REQUIRE(!mkdir(sub, 0700));
	snprintf(sub, sizeof(sub), "%s/io.containerd.runtime.v2.task/ns1", dir);
	REQUIRE(!mkdir(sub, 0700));
	snprintf(sub, sizeof(sub), "%s/io.containerd.runtime.v2.task/ns1/job", dir);
	REQUIRE(!mkdir(sub, 0700));
	/* Root's here only when the unit tests run as root (make test does). */
	if (getuid() == 0) {
		CHECK(containerd_task_name("0::/ns1/job\n", name, sizeof(name)) == 0);
		CHECK_STR(name, "ns1/job");
	}
	CHECK(containerd_task_name("0::/ns1/other\n", name, sizeof(name)) == -ENOENT);
	rmdir(sub);
	snprintf(sub, sizeof(sub), "%s/io.containerd.runtime.v2.task/ns1", dir);
	rmdir(sub);
	snprintf(sub, sizeof(sub), "%s/io.containerd.runtime.v2.task", dir);
	rmdir(sub);
	rmdir(dir);
	unsetenv("DYNPROF_CONTAINERD_STATE");
}

UNIT_MAIN()
