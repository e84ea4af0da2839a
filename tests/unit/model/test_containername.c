// SPDX-License-Identifier: MIT
/*
 * Container names from engine state files (model/containername.c): docker's
 * config.v2.json, containers/storage's containers.json, an OCI bundle's
 * Kubernetes annotations; hostile contents give no name.
 */
#include <errno.h>

#include "model/containername.h"
#include "unit.h"

#define ID "3f4e5d6c7b8a99887766554433221100ffeeddccbbaa00112233445566778899"

TEST(docker_name_without_its_slash)
{
	char name[96];

	CHECK_INT(container_name_from_docker("{\"ID\":\"" ID "\",\"Name\":\"/trainjob\"}", name, sizeof(name)), 0);
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
	CHECK(container_name_from_storage("[{\"id\":\"" ID "\",\"names\":[]}]", ID, name, sizeof(name)) != 0);
}

TEST(kubernetes_namespace_and_pod_from_annotations)
{
	char name[96];

	CHECK_INT(container_name_from_oci("{\"ociVersion\":\"1.0\",\"annotations\":{"
					  "\"io.kubernetes.cri.sandbox-namespace\":\"training\","
					  "\"io.kubernetes.cri.sandbox-name\":\"bert-worker-0\"}}",
					  name, sizeof(name)), 0);
	CHECK_STR(name, "training/bert-worker-0");
	CHECK_INT(container_name_from_oci("{\"annotations\":{\"io.kubernetes.pod.namespace\":\"ns\","
					  "\"io.kubernetes.pod.name\":\"p\"}}", name, sizeof(name)), 0);
	CHECK_STR(name, "ns/p");
	CHECK_INT(container_name_from_oci("{\"annotations\":{}}", name, sizeof(name)), -ENOENT);
	CHECK(container_name_from_oci("{\"annotations\":{\"io.kubernetes.pod.namespace\":\"a/b\","
				      "\"io.kubernetes.pod.name\":\"p\"}}", name, sizeof(name)) != 0);
}

UNIT_MAIN()
