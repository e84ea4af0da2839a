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

TEST(storage_conf_rootless_path_and_variables_kept)
{
	struct storage_conf c;

	storage_conf_parse("[storage]\nrootless_storage_path = \"$HOME/.store\"\n"
			   "graphroot = \"${HOME}/g\"\n",
			   &c);
	CHECK_STR(c.rootless_path, "$HOME/.store");
	CHECK_STR(c.graphroot, "${HOME}/g");
}

TEST(storage_path_expands_the_users_variables_only)
{
	struct storage_user u = { "/home/ann", "ann", 1001 };
	char out[64];

	CHECK_INT(storage_path_expand("$HOME/.local/share/containers/storage", &u, out, sizeof(out)), 0);
	CHECK_STR(out, "/home/ann/.local/share/containers/storage");
	CHECK_INT(storage_path_expand("/srv/${USER}/$UID/s", &u, out, sizeof(out)), 0);
	CHECK_STR(out, "/srv/ann/1001/s");
	CHECK_INT(storage_path_expand("/plain", &u, out, sizeof(out)), 0);
	CHECK_STR(out, "/plain");
	/* Variables the user's environment alone knows; a name that only starts like one. */
	CHECK_INT(storage_path_expand("$XDG_DATA_HOME/containers", &u, out, sizeof(out)), -EINVAL);
	CHECK_INT(storage_path_expand("/x/$HOMEDIR", &u, out, sizeof(out)), -EINVAL);
	CHECK_INT(storage_path_expand("/x/${HOME", &u, out, sizeof(out)), -EINVAL);
	CHECK_INT(storage_path_expand("/x/$", &u, out, sizeof(out)), -EINVAL);
	/* Not absolute, or leaving it with "..". */
	CHECK_INT(storage_path_expand("$USER/x", &u, out, sizeof(out)), -EINVAL);
	CHECK_INT(storage_path_expand("$HOME/../bob", &u, out, sizeof(out)), -EINVAL);
	CHECK_INT(storage_path_expand("$HOME/..", &u, out, sizeof(out)), -EINVAL);
	CHECK_INT(storage_path_expand("$HOME/$HOME/$HOME/$HOME/$HOME/$HOME/$HOME", &u, out, sizeof(out)),
		  -ENAMETOOLONG);
}

/* Every place rootless_place gives, "root|rel " each. */
static const char *rootless_places(const struct storage_conf *mine, const struct storage_conf *sys)
{
	static char seen[8192];
	struct storage_user u = { "/h", "ann", 7 };
	char root[4096], rel[64];

	seen[0] = '\0';
	for (int i = 0; !rootless_place(i, mine, sys, &u, root, sizeof(root), rel, sizeof(rel)); i++) {
		strcat(seen, root);
		strcat(seen, "|");
		strcat(seen, strtok(rel, "-"));
		strcat(seen, " ");
	}
	return seen;
}

TEST(rootless_places_the_users_graphroot_then_roots_path_then_the_default)
{
	struct storage_conf none = { 0 }, mine = { 0 }, sys = { 0 };

	CHECK_STR(rootless_places(&none, &none), "/h/.local/share/containers/storage|overlay "
						 "/h/.local/share/containers/storage|vfs "
						 "/h/.local/share/containers/storage|btrfs "
						 "/h/.local/share/containers/storage|zfs "
						 "/h/.local/share/containers/storage|devmapper "
						 "/h/.local/share/containers/storage|aufs ");
	snprintf(mine.graphroot, sizeof(mine.graphroot), "/data/$USER");
	snprintf(mine.driver, sizeof(mine.driver), "vfs");
	snprintf(sys.rootless_path, sizeof(sys.rootless_path), "/srv/$UID");
	snprintf(sys.driver, sizeof(sys.driver), "btrfs");
	/* The user's driver first (it overrides root's), every root with every driver. */
	const char *all = rootless_places(&mine, &sys);
	CHECK(!strncmp(all, "/data/ann|vfs /data/ann|overlay /data/ann|btrfs ", 48));
	CHECK(strstr(all, "/data/ann|aufs /srv/7|vfs /srv/7|overlay ") != NULL);
	CHECK(strstr(all, "/srv/7|aufs /h/.local/share/containers/storage|vfs ") != NULL);
	CHECK(!strcmp(all + strlen(all) - 40, "/h/.local/share/containers/storage|aufs "));
	/* A root that does not expand is left out. */
	snprintf(mine.graphroot, sizeof(mine.graphroot), "$XDG_DATA_HOME/x");
	mine.driver[0] = '\0';
	CHECK(!strncmp(rootless_places(&mine, &sys), "/srv/7|btrfs /srv/7|overlay ", 28));
}

TEST(nerdctl_name_file_holds_the_id)
{
	static const char id[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	char name[16];

	CHECK_INT(nerdctl_name_file("trainjob", id, id, name, sizeof(name)), 0);
	CHECK_STR(name, "trainjob");
	CHECK_INT(nerdctl_name_file("trainjob",
				    " \n0123456789abcdef0123456789abcdef0123456789abcdef"
				    "0123456789abcdef\n",
				    id, name, sizeof(name)),
		  0);
	CHECK_INT(nerdctl_name_file("trainjob", "ffff", id, name, sizeof(name)), -ENOENT);
	CHECK_STR(name, "");
	CHECK_INT(nerdctl_name_file("trainjob", "", id, name, sizeof(name)), -ENOENT);
	/* Not a name nerdctl gives (containerd's identifiers): never shown. */
	CHECK_INT(nerdctl_name_file("a\x1b[2J", id, id, name, sizeof(name)), -EINVAL);
	CHECK_INT(nerdctl_name_file("-x", id, id, name, sizeof(name)), -EINVAL);
	CHECK_INT(nerdctl_name_file("a..b", id, id, name, sizeof(name)), -EINVAL);
	CHECK_INT(nerdctl_name_file("much-too-long-a-name", id, id, name, sizeof(name)), -ENAMETOOLONG);
}

static void put(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	REQUIRE(f);
	fputs(text, f);
	REQUIRE(!fclose(f));
	REQUIRE(!chmod(path, mode));
}

/* The layout nerdctl keeps: <root>/<hash>/names/<namespace>/<name>, the id inside. */
TEST(nerdctl_name_from_its_names_folder)
{
	static const char id[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	char root[] = "/tmp/dynprof-unit-nerdctl-XXXXXX", p[512], name[96];

	if (getuid() != 0)
		return; /* the folders must be root's: make test runs the units as root */
	REQUIRE(mkdtemp(root));
	setenv("DYNPROF_NERDCTL_ROOT", root, 1);
	CHECK_INT(nerdctl_name(id, name, sizeof(name)), -ENOENT);
	snprintf(p, sizeof(p), "%s/1935db59", root);
	REQUIRE(!mkdir(p, 0700));
	snprintf(p, sizeof(p), "%s/1935db59/names", root);
	REQUIRE(!mkdir(p, 0700));
	snprintf(p, sizeof(p), "%s/1935db59/names/default", root);
	REQUIRE(!mkdir(p, 0700));
	snprintf(p, sizeof(p), "%s/1935db59/names/default/other", root);
	put(p, "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff", 0600);
	snprintf(p, sizeof(p), "%s/1935db59/names/default/trainjob", root);
	put(p, id, 0600);
	CHECK_INT(nerdctl_name(id, name, sizeof(name)), 0);
	CHECK_STR(name, "trainjob");
	/* A folder others may write names nothing (a user could have put the file). */
	snprintf(p, sizeof(p), "%s/1935db59/names/default", root);
	REQUIRE(!chmod(p, 0777));
	CHECK_INT(nerdctl_name(id, name, sizeof(name)), -ENOENT);
	REQUIRE(!chmod(p, 0700));
	/* Nor a file another user owns. */
	snprintf(p, sizeof(p), "%s/1935db59/names/default/trainjob", root);
	REQUIRE(!chown(p, 65534, 65534));
	CHECK_INT(nerdctl_name(id, name, sizeof(name)), -ENOENT);
	CHECK_STR(name, "");
	unlink(p);
	snprintf(p, sizeof(p), "%s/1935db59/names/default/other", root);
	unlink(p);
	snprintf(p, sizeof(p), "%s/1935db59/names/default", root);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/1935db59/names", root);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/1935db59", root);
	rmdir(p);
	rmdir(root);
	unsetenv("DYNPROF_NERDCTL_ROOT");
}

UNIT_MAIN()
