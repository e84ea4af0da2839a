// SPDX-License-Identifier: MIT
/* The params kept as CANN keeps them (see params.h). */
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/params.h"
#include "agent/params_json.h"
#include "shared/decimal.h"
#include "shared/jsonstr.h"
#include "shared/msprof_params.h"

struct kept {
	char *str;   /* MP_STR */
	int64_t num; /* the others */
};

static enum proto_version kept_gen;
static const struct mp_key *kept_tab;
static size_t kept_n;
static struct kept *kept;

void agent_params_reset(void)
{
	for (size_t i = 0; kept && i < kept_n; i++)
		free(kept[i].str);
	free(kept);
	kept = NULL;
	kept_tab = NULL;
	kept_n = 0;
}

/* A fresh set: "" / 0 / false (v1: a key's default number, as nlohmann's value()). */
static struct kept *fresh(const struct mp_key *tab, size_t n, bool v1)
{
	struct kept *k = calloc(n, sizeof(*k));

	for (size_t i = 0; k && i < n; i++) {
		k[i].num = v1 && tab[i].type == MP_INT ? tab[i].num : 0;
		if (tab[i].type == MP_STR && !(k[i].str = strdup(""))) {
			while (i--)
				free(k[i].str);
			free(k);
			return NULL;
		}
	}
	return k;
}

static void drop(struct kept *k, size_t n)
{
	for (size_t i = 0; k && i < n; i++)
		free(k[i].str);
	free(k);
}

struct apply_ctx {
	const struct mp_key *tab;
	size_t n;
	struct kept *into;
	bool strict;
};

/* 9.x FromObject: a present key is assigned, a wrong type clears it (json9:433-528). */
static int assign_lenient(const struct mp_key *key, struct kept *k, struct pj_member *m)
{
	switch (key->type) {
	case MP_STR:
		free(k->str);
		k->str = m->kind == PJ_STR ? m->str : strdup("");
		if (m->kind == PJ_STR)
			m->str = NULL;
		return k->str ? 0 : -ENOMEM;
	case MP_INT:
	case MP_U64:
		k->num = m->kind == PJ_INT ? m->i : 0;
		return 0;
	case MP_BOOL:
		k->num = (m->kind == PJ_BOOL || m->kind == PJ_INT) && m->i != 0;
		return 0;
	}
	return 0;
}

/* nlohmann's value(): the exact type, else it throws and START fails. */
static int assign_strict(const struct mp_key *key, struct kept *k, struct pj_member *m)
{
	switch (key->type) {
	case MP_STR:
		if (m->kind != PJ_STR)
			return -EINVAL;
		free(k->str);
		k->str = m->str;
		m->str = NULL;
		return 0;
	case MP_INT:
		if (m->kind != PJ_INT && m->kind != PJ_DOUBLE && m->kind != PJ_BOOL)
			return -EINVAL;
		k->num = (int32_t)m->i;
		return 0;
	case MP_U64:
		if (m->kind != PJ_INT && m->kind != PJ_DOUBLE)
			return -EINVAL;
		k->num = m->kind == PJ_INT ? (int64_t)m->u : m->i;
		return 0;
	case MP_BOOL:
		if (m->kind != PJ_BOOL)
			return -EINVAL;
		k->num = m->i;
		return 0;
	}
	return 0;
}

static int on_member(void *ctx, struct pj_member *m)
{
	struct apply_ctx *a = ctx;
	const struct mp_key *key = mp_find(a->tab, a->n, m->key, m->klen);

	if (!key)
		return 0; /* parsed, and not a field of ProfileParams */
	return (a->strict ? assign_strict : assign_lenient)(key, &a->into[key - a->tab], m);
}

static size_t index_of(const char *key)
{
	const struct mp_key *k = mp_find(kept_tab, kept_n, key, strlen(key));

	return k ? (size_t)(k - kept_tab) : SIZE_MAX;
}

static const char *get(const char *key)
{
	size_t i = index_of(key);

	return i != SIZE_MAX && kept[i].str ? kept[i].str : "";
}

static bool is(const char *key, const char *v)
{
	return !strcmp(get(key), v);
}

static int set(const char *key, const char *v)
{
	size_t i = index_of(key);
	char *copy;

	if (i == SIZE_MAX)
		return 0;
	copy = strdup(v);
	if (!copy)
		return -ENOMEM;
	free(kept[i].str);
	kept[i].str = copy;
	return 0;
}

/*
 * storageLimit: "<N>MB", N in [200, 4294967295]; below 200 START fails and
 * the field becomes "200MB" (pv9:951-1005), which persists.
 */
static int v2_storage_limit(void)
{
	const char *v = get("storageLimit");
	uint64_t n;
	size_t digits;

	if (!*v)
		return 0;
	if (decimal_prefix(v, SIZE_MAX, 4294967295ULL, &n, &digits) || strcmp(v + digits, "MB"))
		return -EINVAL;
	if (n >= 200)
		return 0;
	return set("storageLimit", "200MB") ? -ENOMEM : -EINVAL;
}

/* The rewrites 9.x makes after parsing, which persist (acl9:1874-1884, 490-505). */
static int v2_rewrites(void)
{
	static const char *const levels[][2] = {
		{ "on", "level1" }, { "l1", "level1" }, { "l0", "level0" },
		{ "l2", "level2" }, { "l3", "level3" },
	};
	size_t pid = index_of("host_sys_pid");
	int rc = 0;

	if (pid != SIZE_MAX)
		kept[pid].num = getpid();
	if (is("prof_level", "off") && is("taskTime", "on") && is("taskTrace", "on"))
		rc = set("prof_level", "on");
	for (size_t i = 0; !rc && i < sizeof(levels) / sizeof(levels[0]); i++)
		if (is("prof_level", levels[i][0])) {
			rc = set("prof_level", levels[i][1]);
			break;
		}
	if (!rc && strcmp(get("prof_level"), "off") && *get("prof_level"))
		rc = set("runtimeTrace", "on");
	return rc ? rc : v2_storage_limit();
}

int agent_params_apply(enum proto_version gen, const char *json)
{
	bool v1 = gen == PROTO_V1;
	const struct mp_key *tab = v1 ? mp_v1_keys : mp_v2_keys;
	size_t n = v1 ? mp_v1_nkeys : mp_v2_nkeys;
	struct apply_ctx a = { tab, n, NULL, v1 };
	int rc;

	if (!kept || kept_gen != gen) {
		agent_params_reset();
		kept = fresh(tab, n, v1);
		if (!kept)
			return -ENOMEM;
		kept_tab = tab;
		kept_n = n;
		kept_gen = gen;
	}
	/* The whole document is parsed before any field is assigned: work on a copy. */
	a.into = fresh(tab, n, v1);
	if (!a.into)
		return -ENOMEM;
	for (size_t i = 0; !v1 && i < n; i++) {
		if (tab[i].type == MP_STR) {
			free(a.into[i].str);
			a.into[i].str = strdup(kept[i].str);
			if (!a.into[i].str) {
				drop(a.into, n);
				return -ENOMEM;
			}
		}
		a.into[i].num = kept[i].num;
	}
	rc = pj_parse(json, v1, on_member, &a);
	if (rc) {
		drop(a.into, n);
		return rc;
	}
	drop(kept, n);
	kept = a.into;
	return v1 ? 0 : v2_rewrites();
}

int agent_params_result_dir(char *out, size_t len)
{
	const char *dir = kept ? get("result_dir") : "", *work = getenv("ASCEND_WORK_PATH");
	char exe[PATH_MAX];
	ssize_t n;

	if (*dir)
		return snprintf(out, len, "%s", dir) < (int)len ? 0 : -ENAMETOOLONG;
	if (!kept || kept_gen == PROTO_V1)
		return -EINVAL;
	/* 9.x's default (acl9:1306-1340). */
	if (work && *work)
		return snprintf(out, len, "%s/profiling_data", work) < (int)len ? 0 : -ENAMETOOLONG;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -EINVAL;
	exe[n] = '\0';
	return snprintf(out, len, "%s", dirname(exe)) < (int)len ? 0 : -ENAMETOOLONG;
}

/* Bits of prof_data_config.h, as 9.x's ProfAclMgr sets them. */
static uint64_t v2_data_type_config(void)
{
	static const struct {
		const char *key, *value;
		uint64_t bits;
	} rules[] = {
		{ "acl", "on", 0x1 },
		{ "prof_level", "level1", 0x2 | 0x800 },
		{ "prof_level", "level0", 0x800 },
		{ "prof_level", "level2", 0x2 | 0x800 | 0x2000 },
		{ "prof_level", "level3", 0x2 | 0x800 | 0x2000 | 0x8000 },
		{ "runtimeTrace", "on", 0x4000000 },
		{ "hwts_log", "on", 0x800 },
		{ "stars_acsq_task", "on", 0x800 },
		{ "ts_keypoint", "on", 0x40 },
		{ "runtimeApi", "on", 0x100 },
		{ "aicpuTrace", "on", 0x8 },
		{ "hcclTrace", "on", 0x20 },
		{ "l2CacheTaskProfiling", "on", 0x10 },
		{ "taskMemory", "on", 0x1000 },
		{ "taskTsfw", "on", 0x400 },
		{ "geApi", "l0", 0x200 },
		{ "geApi", "l1", 0x200 | 0x1000000 },
		{ "instrProfiling", "on", 0x800000 },
	};
	uint64_t b = 0x4000000000000000ULL; /* always (acl9:459-462) */

	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		if (is(rules[i].key, rules[i].value))
			b |= rules[i].bits;
	if (*get("ai_core_metrics"))
		b |= 0x4;
	if (*get("aiv_metrics"))
		b |= 0x20000000;
	return b;
}

uint64_t agent_params_data_type_config(void)
{
	size_t i;

	if (!kept)
		return 0;
	if (kept_gen == PROTO_V2)
		return v2_data_type_config();
	i = index_of("dataTypeConfig");
	return i == SIZE_MAX ? 0 : (uint64_t)kept[i].num;
}

char *agent_params_effective_json(void)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	fprintf(f, "{\"generation\":\"%s\",\"dataTypeConfig\":\"0x%016" PRIX64 "\",\"params\":{",
		kept_gen == PROTO_V1 ? "v1" : "v2", agent_params_data_type_config());
	for (size_t i = 0; kept && i < kept_n; i++) {
		fprintf(f, "%s\"%s\":", i ? "," : "", kept_tab[i].key);
		if (kept_tab[i].type == MP_STR)
			json_put_string(f, kept[i].str);
		else if (kept_tab[i].type == MP_BOOL)
			fputs(kept[i].num ? "true" : "false", f);
		else if (kept_tab[i].type == MP_U64)
			fprintf(f, "%" PRIu64, (uint64_t)kept[i].num);
		else
			fprintf(f, "%" PRId64, kept[i].num);
	}
	fputs("}}\n", f);
	if (fclose(f)) {
		free(text);
		return NULL;
	}
	return text;
}
