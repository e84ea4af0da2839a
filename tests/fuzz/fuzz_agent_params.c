// SPDX-License-Identifier: MIT
/*
 * The agent's params readers (agent/params_json.c, agent/params.c): the
 * JSON a client sends, which any local user can. First byte: the lenient
 * reader (9.x's NanoJson), the strict one (v1's), or a whole START's
 * params applied as 9.x or v1 keeps them; the effective set the agent then
 * records must be valid JSON whatever the input was. The agent's sources
 * are compiled in, as test_agent_params does: the tool's objects are linked.
 */
#include <cjson/cJSON.h>

#include "fuzz.h"
#include "../../user/agent/params_json.c"
#include "../../user/agent/params.c"

static int keep_none(void *ctx, struct pj_member *m)
{
	(void)ctx;
	FUZZ_CHECK(m->kind != PJ_STR || m->str);
	return 0;
}

static void apply(enum proto_version gen, const char *json)
{
	char dir[PATH_MAX], *eff;
	cJSON *doc;

	agent_params_reset();
	if (agent_params_apply(gen, json) == 0) {
		eff = agent_params_effective_json();
		FUZZ_CHECK(eff);
		doc = cJSON_Parse(eff);
		FUZZ_CHECK(doc); /* host/dynprof_params.json stays JSON */
		cJSON_Delete(doc);
		free(eff);
		if (agent_params_result_dir(dir, sizeof(dir)) == 0)
			FUZZ_CHECK(fuzz_terminated(dir, sizeof(dir)));
		fuzz_ignore((long)agent_params_data_type_config());
	}
	agent_params_reset();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *t;

	if (size < 1)
		return 0;
	t = fuzz_cstr(data + 1, size - 1);
	switch (data[0] % 4) {
	case 0:
	case 1:
		fuzz_ignore(pj_parse(t, data[0] % 4 == 1, keep_none, NULL));
		break;
	case 2:
		apply(PROTO_V2, t);
		break;
	default:
		apply(PROTO_V1, t);
		break;
	}
	free(t);
	return 0;
}
