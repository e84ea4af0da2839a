// SPDX-License-Identifier: MIT
/*
 * Container names from engine state files (model/containername.c): docker's
 * config.v2.json, containers/storage's containers.json, an OCI bundle's
 * Kubernetes annotations; hostile contents give no name.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

#include "model/containername.h"
#include "unit.h"

#define ID "3f4e5d6c7b8a99887766554433221100ffeeddccbbaa00112233445566778899"

TEST(docker_name_without_its_slash)
{
	char name[96];

	CHECK_INT(container_name_from_docker("{\"ID\":\"" ID "\",\"Name\":\"/trainjob\"}", name,
					     sizeof(name)),
		  0);
	CHECK_STR(name, "trainjob");
	CHECK_INT(container_name_from_docker("{\"ID\":\"" ID "\"}", name, sizeof(name)), -ENOENT);
	CHECK_INT(container_name_from_docker("not json", name, sizeof(name)), -EINVAL);
	CHECK_INT(container_name_from_docker("[1,2]", name, sizeof(name)), -ENOENT);
}

TEST(hostile_names_are_dropped)
{
	char name[8];

	CHECK(container_name_from_docker("{\"Name\":\"/a\\u001b[2Jb\"}", name, sizeof(name)) != 0);
	CHECK(container_name_from_docker("{\"Name\":\"/a/../b\"}", name, sizeof(name)) != 0);
	CHECK(container_name_from_docker("{\"Name\":\"/a b\"}", name, sizeof(name)) != 0);
	CHECK(container_name_from_docker("{\"Name\":\"/a\xff"
					 "b\"}",
					 name, sizeof(name)) != 0);
	CHECK(container_name_from_docker("{\"Name\":\"/\\u00e9t\\u00e9\"}", name, sizeof(name)) != 0);
	CHECK(container_name_from_docker("{\"Name\":\"/much-too-long\"}", name, sizeof(name)) != 0);
	CHECK(container_name_from_docker("{\"Name\":7}", name, sizeof(name)) != 0);
	CHECK(container_name_from_docker("{\"Name\":\"/\"}", name, sizeof(name)) != 0);
}

TEST(storage_first_name_of_the_matching_id)
{
	char name[96];
	const char *json = "[{\"id\":\"0123\",\"names\":[\"other\"]},"
			   "{\"id\":\"" ID "\",\"names\":[\"trainjob\",\"alias\"],\"image\":\"x\"}]";

	CHECK_INT(container_name_from_storage(json, ID, name, sizeof(name)), 0);
	CHECK_STR(name, "trainjob");
	CHECK_INT(container_name_from_storage(json, "ffff", name, sizeof(name)), -ENOENT);
	CHECK_INT(container_name_from_storage("{\"id\":1}", ID, name, sizeof(name)), -EINVAL);
	CHECK(container_name_from_storage("[{\"id\":\"" ID "\",\"names\":[]}]", ID, name,
					  sizeof(name)) != 0);
}

TEST(kubernetes_namespace_and_pod_from_annotations)
{
	char name[96];

	CHECK_INT(container_name_from_oci("{\"ociVersion\":\"1.0\",\"annotations\":{"
					  "\"io.kubernetes.cri.sandbox-namespace\":\"training\","
					  "\"io.kubernetes.cri.sandbox-name\":\"bert-worker-0\"}}",
					  name, sizeof(name)),
		  0);
	CHECK_STR(name, "training/bert-worker-0");
	CHECK_INT(container_name_from_oci("{\"annotations\":{\"io.kubernetes.pod.namespace\":\"ns\","
					  "\"io.kubernetes.pod.name\":\"p\"}}",
					  name, sizeof(name)),
		  0);
	CHECK_STR(name, "ns/p");
	CHECK_INT(container_name_from_oci("{\"annotations\":{}}", name, sizeof(name)), -ENOENT);
	CHECK(container_name_from_oci("{\"annotations\":{\"io.kubernetes.pod.namespace\":\"a/b\","
				      "\"io.kubernetes.pod.name\":\"p\"}}",
				      name, sizeof(name)) != 0);
}

/* Polls container_name_lookup until it names `want` or `limit_ms` pass; the ms it took, or -1. */
static long name_within(const char *id, const char *want, long limit_ms)
{
	struct timespec t0, t;
	char name[96];

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		long ms;

		container_name_lookup(id, 0, name, sizeof(name));
		clock_gettime(CLOCK_MONOTONIC, &t);
		ms = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
		if (!strcmp(name, want))
			return ms;
		if (ms > limit_ms)
			return -1;
		nanosleep(&(struct timespec){ 0, 50 * 1000 * 1000 }, NULL);
	}
}

/*
 * A container seen before its engine wrote its state file (docker writes
 * config.v2.json after the process starts): the miss is kept a few
 * seconds only, then the file is read again and the name found.
 */
TEST(a_name_missed_once_is_found_once_its_state_file_appears)
{
	static const char id[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	char root[] = "/tmp/dynprof-ctrname-XXXXXX", path[256];
	char name[96] = "unset";
	FILE *f;

	REQUIRE(mkdtemp(root) != NULL);
	REQUIRE(setenv("DYNPROF_DOCKER_ROOT", root, 1) == 0);
	container_name_lookup(id, 0, name, sizeof(name));
	CHECK_STR(name, ""); /* no state yet: the miss is cached */
	snprintf(path, sizeof(path), "%s/containers", root);
	REQUIRE(mkdir(path, 0700) == 0);
	snprintf(path, sizeof(path), "%s/containers/%s", root, id);
	REQUIRE(mkdir(path, 0700) == 0);
	snprintf(path, sizeof(path), "%s/containers/%s/config.v2.json", root, id);
	f = fopen(path, "w");
	REQUIRE(f != NULL);
	fputs("{\"Name\":\"/latejob\"}", f);
	REQUIRE(fclose(f) == 0);
	/* The miss is kept 3 s (MISS_KEEP_MS): found after that, within 10 s at most. */
	CHECK(name_within(id, "latejob", 10000) >= 0);
	unlink(path);
	snprintf(path, sizeof(path), "%s/containers/%s", root, id);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/containers", root);
	rmdir(path);
	rmdir(root);
	unsetenv("DYNPROF_DOCKER_ROOT");
}

UNIT_MAIN()
