/* SPDX-License-Identifier: MIT */
/*
 * 64-bit integers in cJSON objects as raw digits: cJSON keeps numbers as
 * doubles and would print microseconds since 1970 or large call counts in
 * exponent form.
 */
#ifndef DYNPROF_JSON_NUM_H
#define DYNPROF_JSON_NUM_H

#include <stdio.h>

#include <cjson/cJSON.h>

static inline void json_add_int64(cJSON *obj, const char *name, long long value)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%lld", value);
	cJSON_AddRawToObject(obj, name, buf);
}

static inline void json_add_uint64(cJSON *obj, const char *name, unsigned long long value)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%llu", value);
	cJSON_AddRawToObject(obj, name, buf);
}

#endif /* DYNPROF_JSON_NUM_H */
