// SPDX-License-Identifier: MIT
/*
 * Container ids from cgroup text (model/container.c): each engine's and
 * cgroup driver's layout, nesting, and the near misses that are not ids.
 */
#include <stdio.h>
#include <string.h>

#include "model/procmodel.h"
#include "model/container.h"
#include "unit.h"

#define ID "3f4e5d6c7b8a99887766554433221100ffeeddccbbaa00112233445566778899"
#define ID2 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static const char *cid(const char *text)
{
	static char id[72];

	procmodel_container_id(text, id, sizeof(id));
	return id;
}

/* ---- container ids ---------------------------------------------------------------- */

TEST(container_docker_cgroupfs_v1)
{
	CHECK_STR(cid("12:memory:/docker/" ID "\n11:cpu,cpuacct:/docker/" ID "\n"
		      "1:name=systemd:/docker/" ID "\n0::/\n"),
		  ID);
}

TEST(container_docker_systemd_v2)
{
	CHECK_STR(cid("0::/system.slice/docker-" ID ".scope\n"), ID);
}

TEST(container_docker_cgroupfs_v2)
{
	CHECK_STR(cid("0::/docker/" ID "\n"), ID);
}

TEST(container_containerd_scope)
{
	CHECK_STR(cid("0::/system.slice/cri-containerd-" ID ".scope\n"), ID);
}

TEST(container_crio_scope_and_cgroupfs)
{
	CHECK_STR(cid("0::/kubepods.slice/kubepods-besteffort.slice/"
		      "kubepods-besteffort-pod2b1c_33aa_4f1e.slice/crio-" ID ".scope\n"),
		  ID);
	CHECK_STR(cid("0::/kubepods/besteffort/pod2b1c33aa-4f1e/crio-" ID "\n"), ID);
}

TEST(container_podman_root_and_rootless)
{
	CHECK_STR(cid("0::/machine.slice/libpod-" ID ".scope\n"), ID);
	CHECK_STR(cid("0::/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID
		      ".scope/container\n"),
		  ID);
}

TEST(container_nerdctl_cgroupfs_and_systemd)
{
	CHECK_STR(cid("9:memory:/default/" ID "\n0::/default/" ID "\n"), ID);
	CHECK_STR(cid("0::/system.slice/nerdctl-" ID ".scope\n"), ID);
}

TEST(container_conmon_is_not_the_container)
{
	CHECK_STR(cid("0::/machine.slice/libpod-conmon-" ID ".scope\n"), "");
	CHECK_STR(cid("0::/system.slice/crio-conmon-" ID ".scope\n"), "");
}

TEST(container_kubepods_cgroupfs_v1)
{
	CHECK_STR(cid("11:memory:/kubepods/burstable/pod0d8e6a3c-6f0b-4c8e-9a36-0f6d6a1c2b3d/" ID
		      "\n10:pids:/kubepods/burstable/pod0d8e6a3c-6f0b-4c8e-9a36-0f6d6a1c2b3d/" ID "\n"),
		  ID);
	/* Guaranteed pods sit right under kubepods. */
	CHECK_STR(cid("0::/kubepods/pod0d8e6a3c/" ID "\n"), ID);
}

TEST(container_kubepods_systemd_slices)
{
	CHECK_STR(cid("0::/kubepods.slice/kubepods-burstable.slice/"
		      "kubepods-burstable-pod0d8e6a3c_6f0b_4c8e_9a36_0f6d6a1c2b3d.slice/"
		      "cri-containerd-" ID ".scope\n"),
		  ID);
	CHECK_STR(cid("0::/kubepods.slice/kubepods-pod0d8e6a3c.slice/docker-" ID ".scope\n"), ID);
}

TEST(container_deepest_id_wins)
{
	/* docker-in-docker: the process is in the inner container. */
	CHECK_STR(cid("0::/docker/" ID "/docker/" ID2 "\n"), ID2);
	/* systemd inside the container: still the container's id. */
	CHECK_STR(cid("1:name=systemd:/docker/" ID "/init.scope\n"), ID);
}

TEST(container_first_hierarchy_with_an_id)
{
	CHECK_STR(cid("13:misc:/\n12:memory:/docker/" ID "\n0::/\n"), ID);
}

TEST(container_host_processes)
{
	CHECK_STR(cid("0::/init.scope\n"), "");
	CHECK_STR(cid("0::/user.slice/user-0.slice/session-3.scope\n"), "");
	CHECK_STR(cid("0::/\n"), "");
	CHECK_STR(cid(""), "");
	CHECK_STR(cid(NULL), "");
	CHECK_STR(cid("12:memory:/user.slice\n1:name=systemd:/system.slice/sshd.service\n0::/\n"), "");
	/* A 32-hex name is not a container engine's id. */
	CHECK_STR(cid("4:memory:/process_api/cc7fca339ae472a28b77235115a065e5\n"), "");
}

TEST(container_near_misses)
{
	CHECK_STR(cid("0::/docker/" ID "0\n"), ""); /* 65 hex */
	CHECK_STR(cid("0::/docker/3f4e5d6c7b8a99887766554433221100ffeeddccbbaa0011223344556677889\n"),
		  ""); /* 63 hex */
	CHECK_STR(cid("0::/docker/3F4E5D6C7B8A99887766554433221100FFEEDDCCBBAA00112233445566778899\n"),
		  ""); /* upper case */
	CHECK_STR(cid("0::/system.slice/docker-" ID ".scopex\n"), "");
	CHECK_STR(cid("0::/system.slice/rkt-" ID ".scope\n"), ""); /* unknown engine */
	CHECK_STR(cid("no colons at all " ID "\n"), "");
}

TEST(container_id_cut_to_buffer)
{
	char id[13];

	procmodel_container_id("0::/docker/" ID "\n", id, sizeof(id));
	CHECK_STR(id, "3f4e5d6c7b8a");
}

TEST(container_runc_and_crun_scopes_name_their_id)
{
	CHECK_STR(cid("0::/system.slice/runc-trainjob.scope\n"), "trainjob");
	CHECK_STR(cid("0::/machine.slice/crun-rank_0.job-1.scope\n"), "rank_0.job-1");
	/* The deepest still wins: an engine's container inside a runc one. */
	CHECK_STR(cid("0::/system.slice/runc-outer.scope/docker/" ID "\n"), ID);
	/* Not ids: a monitor, an empty or hidden name, a bad character. */
	CHECK_STR(cid("0::/system.slice/runc-.scope\n"), "");
	CHECK_STR(cid("0::/system.slice/runc-.hidden.scope\n"), "");
	CHECK_STR(cid("0::/system.slice/runc-a b.scope\n"), "");
	CHECK_STR(cid("0::/system.slice/runc-trainjob\n"), "");
}

static const char *guess(const char *text)
{
	static char name[72];

	procmodel_container_guess(text, name, sizeof(name));
	return name;
}

TEST(container_guess_names_a_bare_top_level_folder)
{
	CHECK_STR(guess("0::/trainjob\n"), "trainjob");
	CHECK_STR(guess("12:pids:/trainjob\n1:name=systemd:/trainjob\n0::/\n"), "trainjob");
	CHECK_STR(guess("9:name=systemd:/\n8:pids:/job-7\n"), "job-7");
	/* systemd inside the container */
	CHECK_STR(guess("0::/trainjob/init.scope\n"), "trainjob");
	CHECK_STR(guess("0::/trainjob/system.slice/sshd.service\n"), "trainjob");
}

TEST(container_guess_leaves_host_and_engine_folders)
{
	CHECK_STR(guess("0::/\n"), "");
	CHECK_STR(guess("0::/init.scope\n"), "");
	CHECK_STR(guess("0::/user.slice/user-0.slice/session-3.scope\n"), "");
	CHECK_STR(guess("0::/system.slice/sshd.service\n"), "");
	CHECK_STR(guess("0::/docker\n"), "");
	CHECK_STR(guess("0::/kubepods\n"), "");
	CHECK_STR(guess("4:memory:/process_api/cc7fca339ae472a28b77235115a065e5\n"), "");
	CHECK_STR(guess("0::/a b\n"), "");
	CHECK_STR(guess(NULL), "");
}

static struct pm_proc in(const char *id, const char *name)
{
	struct pm_proc p = { 0 };

	snprintf(p.container, sizeof(p.container), "%s", id);
	snprintf(p.container_name, sizeof(p.container_name), "%s", name);
	return p;
}

TEST(container_selected_by_name_id_or_hex_prefix)
{
	struct pm_proc docker = in(ID, "trainjob"), runc = in("job1", "job1"), host = in("", "");

	CHECK(pm_proc_in_container(&docker, NULL));
	CHECK(pm_proc_in_container(&host, NULL));
	CHECK(pm_proc_in_container(&docker, "trainjob"));
	CHECK(pm_proc_in_container(&docker, "3f4e"));
	CHECK(pm_proc_in_container(&docker, ID));
	CHECK(!pm_proc_in_container(&docker, "3f4"));   /* too short a prefix */
	CHECK(!pm_proc_in_container(&docker, "train")); /* names match whole */
	CHECK(pm_proc_in_container(&runc, "job1"));
	CHECK(!pm_proc_in_container(&runc, "job"));
	CHECK(!pm_proc_in_container(&host, "trainjob"));
}

/* ---- one line at a time (cgowner.c checks each path in the real cgroup fs) ---- */

TEST(cgroup_lines_split_into_controllers_and_path)
{
	const char *cursor = "12:cpu,cpuacct:/docker/x\nbad line\n0::/user.slice";
	struct cgroup_line l;

	REQUIRE(procmodel_cgroup_line(&cursor, &l));
	CHECK_INT((int)l.controllers_len, 11);
	CHECK(!memcmp(l.controllers, "cpu,cpuacct", 11));
	CHECK_INT((int)l.path_len, 9);
	CHECK(!memcmp(l.path, "/docker/x", 9));
	REQUIRE(procmodel_cgroup_line(&cursor, &l)); /* the line without ':' skipped */
	CHECK_INT((int)l.controllers_len, 0);
	CHECK_INT((int)l.path_len, 11);
	CHECK(!procmodel_cgroup_line(&cursor, &l));
	cursor = NULL;
	CHECK(!procmodel_cgroup_line(&cursor, &l));
}

static const char *id_in(const char *path, size_t n)
{
	static char id[80];

	procmodel_container_id_in(path, n, id, sizeof(id));
	return id;
}

/* The root-made part only: a user's folder below an engine's names nothing more. */
TEST(container_id_in_a_prefix_of_the_path)
{
	const char *p = "/system.slice/docker-" ID ".scope/runc-trainjob.scope";
	size_t outer = strlen("/system.slice/docker-" ID ".scope");

	CHECK_STR(id_in(p, strlen(p)), "trainjob");
	CHECK_STR(id_in(p, outer), ID);
	CHECK_STR(id_in(p, strlen("/system.slice")), "");
	CHECK_STR(id_in(p, 0), "");
}

static const char *rootless(const char *path)
{
	static char id[80];

	procmodel_rootless_id(path, strlen(path), id, sizeof(id));
	return id;
}

TEST(rootless_podman_id_only)
{
	CHECK_STR(rootless("/user.slice/libpod-" ID ".scope"), ID);
	CHECK_STR(rootless("/user.slice/libpod-" ID ".scope/container"), ID);
	CHECK_STR(rootless("/libpod-" ID), ID);
	CHECK_STR(rootless("/app.slice/libpod-" ID2 ".scope/libpod-" ID ".scope"), ID);
	/* No other engine's form, no runtime's name: a user makes those at will. */
	CHECK_STR(rootless("/app.slice/docker-" ID ".scope"), "");
	CHECK_STR(rootless("/app.slice/runc-trainjob.scope"), "");
	CHECK_STR(rootless("/app.slice/" ID), "");
	CHECK_STR(rootless("/libpod-conmon-" ID ".scope"), "");
	CHECK_STR(rootless("/libpod-" ID "0.scope"), "");
	CHECK_STR(rootless(""), "");
}

UNIT_MAIN()
