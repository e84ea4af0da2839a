// SPDX-License-Identifier: MIT
/* result_dir from the client's params JSON (see params.h). */
#include <errno.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "agent/params.h"

int params_result_dir(const char *json, char *out, size_t len)
{
	const cJSON *dir;
	cJSON *root;
	size_t n;
	int rc = -EINVAL;

	root = cJSON_Parse(json);
	if (!root)
		return -EINVAL;
	dir = cJSON_IsObject(root) ? cJSON_GetObjectItemCaseSensitive(root, "result_dir") : NULL;
	if (cJSON_IsString(dir) && dir->valuestring && *dir->valuestring) {
		n = strlen(dir->valuestring);
		rc = n < len ? 0 : -ENAMETOOLONG;
		if (rc == 0)
			memcpy(out, dir->valuestring, n + 1);
	}
	cJSON_Delete(root);
	return rc;
}
