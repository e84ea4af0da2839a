// SPDX-License-Identifier: MIT
/* The params JSON sent to each target (see params.h). */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "dynprof/proto.h"
#include "config/params.h"
#include "out/report.h"

char *params_build(const struct options *o, const char *result_dir)
{
	cJSON *obj = cJSON_CreateObject();
	char *text = NULL;
	size_t len;

	if (!obj || !cJSON_AddStringToObject(obj, "result_dir", result_dir))
		goto oom;
	for (int i = 0; i < o->nswitches; i++)
		if (!cJSON_AddStringToObject(obj, o->switches[i].json_key, o->switches[i].value))
			goto oom;
	text = cJSON_PrintUnformatted(obj);
	cJSON_Delete(obj);
	if (!text)
		goto oom_text;
	len = strlen(text);
	if (len >= PROTO_DATA_MAX) {
		report_error("dynprof: the collection parameters take %zu bytes, more than the protocol's %d: shorten --output or give fewer switches.",
			     len, PROTO_DATA_MAX - 1);
		cJSON_free(text);
		return NULL;
	}
	return text;
oom:
	cJSON_Delete(obj);
oom_text:
	report_error("dynprof: out of memory building the collection parameters");
	return NULL;
}
