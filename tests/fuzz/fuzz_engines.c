// SPDX-License-Identifier: MIT
/*
 * The engines' state and configuration as dynprof parses it
 * (model/containername.c, engine_conf.c, conmon.c): docker's
 * config.v2.json, containers/storage's containers.json, an OCI bundle's
 * annotations, storage.conf and its rootless paths, containerd's
 * /<namespace>/<id> cgroups, a nerdctl name file, a conmon's argv. Every
 * name given is printable, without '/' where it may have none, and fits.
 * First byte: which.
 */
#include "fuzz.h"
#include "model/conmon.h"
#include "model/containername.h"
#include "model/engine_conf.h"

#define ID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

/* A name shown to people and made into a folder: printable, no '/' unless allowed. */
static void shown(const char *name, size_t len, int rc, int slash_ok)
{
	if (rc) /* a refusal promises nothing of the buffer */
		return;
	FUZZ_CHECK(fuzz_terminated(name, len));
	FUZZ_CHECK(name[0]);
	for (const char *c = name; *c; c++)
		FUZZ_CHECK((unsigned char)*c > 0x20 && (unsigned char)*c < 0x7f &&
			   (slash_ok || *c != '/'));
}

static void storage_conf(const char *t)
{
	struct storage_conf c, none = { 0 };
	struct storage_user u = { "/home/u", "u", 1000 };
	char out[256], root[4096], rel[64];

	storage_conf_parse(t, &c);
	FUZZ_CHECK(fuzz_terminated(c.graphroot, sizeof(c.graphroot)));
	FUZZ_CHECK(fuzz_terminated(c.driver, sizeof(c.driver)));
	FUZZ_CHECK(!strchr(c.driver, '/') && !strchr(c.driver, '.'));
	if (!storage_path_expand(t, &u, out, sizeof(out)))
		FUZZ_CHECK(out[0] == '/' && !strstr(out, "/../"));
	for (int i = 0;
	     i < 64 && !rootless_place(i, &c, &none, &u, root, sizeof(root), rel, sizeof(rel)); i++) {
		FUZZ_CHECK(root[0] == '/');
		FUZZ_CHECK(!strchr(rel, '.') || !strcmp(strchr(rel, '.'), ".json"));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char name[96], small[8], *t;
	int rc;

	if (size < 1)
		return 0;
	t = fuzz_cstr(data + 1, size - 1);
	switch (data[0] % 7) {
	case 0:
		rc = container_name_from_docker(t, name, sizeof(name));
		shown(name, sizeof(name), rc, 0);
		break;
	case 1:
		rc = container_name_from_storage(t, ID, name, sizeof(name));
		shown(name, sizeof(name), rc, 0);
		break;
	case 2:
		rc = container_name_from_oci(t, small, sizeof(small));
		shown(small, sizeof(small), rc, 1);
		break;
	case 3:
		storage_conf(t);
		break;
	case 4:
		rc = containerd_task_candidate(t, name, sizeof(name));
		shown(name, sizeof(name), rc, 1);
		break;
	case 5: {
		/* The file's name is the input's first line, its text the rest. */
		char *nl = strchr(t, '\n');

		if (nl)
			*nl = '\0';
		rc = nerdctl_name_file(t, nl ? nl + 1 : "", ID, small, sizeof(small));
		shown(small, sizeof(small), rc, 0);
		break;
	}
	default:
		/* argv as cmdline holds it: the raw bytes, NULs included. */
		rc = conmon_argv_id((const char *)data + 1, size - 1, name, sizeof(name));
		FUZZ_CHECK(fuzz_terminated(name, sizeof(name)));
		FUZZ_CHECK(rc || (strlen(name) == 64 && strspn(name, "0123456789abcdef") == 64));
		break;
	}
	free(t);
	return 0;
}
