// SPDX-License-Identifier: MIT
/* Agent settings from the environment (see config.h). */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/config.h"
#include "shared/cannkey.h"
#include "shared/decimal.h"

/* A whole decimal number in 1..INT_MAX, else -1. */
static int parse_positive(const char *text)
{
	int v;

	return decimal_int(text, 1, INT_MAX, &v) ? -1 : v;
}

/* An unset variable gives `def`; a set one must be a positive number. */
static int positive_env(const char *name, int def, int *out)
{
	const char *text = getenv(name);

	if (!text) {
		*out = def;
		return 0;
	}
	*out = parse_positive(text);
	return *out > 0 ? 0 : -EINVAL;
}

static int protocol_env(enum proto_version *out)
{
	const char *text = getenv(AGENT_PROTOCOL_ENV);

	if (!text || !strcmp(text, "v2") || !strcmp(text, "2"))
		*out = PROTO_V2;
	else if (!strcmp(text, "v1") || !strcmp(text, "1"))
		*out = PROTO_V1;
	else
		return -EINVAL;
	return 0;
}

/* DYNPROF_AGENT_FLAVOUR: unset or "file" (9.x), "abstract" (8.5.0; v2 only). */
static int flavour_env(const struct agent_config *cfg, int *abstract)
{
	const char *text = getenv(AGENT_FLAVOUR_ENV);

	*abstract = 0;
	if (!text || !strcmp(text, "file"))
		return 0;
	if (strcmp(text, "abstract") || cfg->protocol != PROTO_V2)
		return -EINVAL;
	*abstract = 1;
	return 0;
}

/* The key CANN 9.x would name its socket with: the raw text when > 0, else none. */
static int key_env(struct agent_config *cfg)
{
	const char *text = getenv(DYNPROF_KEY_ENV);
	long v;

	cfg->key[0] = '\0';
	if (cfg->protocol != PROTO_V2) /* v1 servers key on their pid alone */
		return 0;
	if (cann_key_parse(text, &v))
		return -EINVAL;
	if (v <= 0)
		return 0;
	if (strlen(text) >= sizeof(cfg->key))
		return -EINVAL;
	memcpy(cfg->key, text, strlen(text) + 1);
	return 0;
}

/* CANN's limits per server kind (docs/PROTOCOL.md Part 2 section 3): 8.5.0 has none. */
static int limits_env(struct agent_config *cfg, const char **bad)
{
	int def_requests = cfg->protocol == PROTO_V1 ? PROTO_V1_MAX_REQUESTS : PROTO_V2_MAX_REQUESTS;

	if (positive_env(AGENT_MAX_REQUESTS_ENV, def_requests, &cfg->max_requests)) {
		*bad = AGENT_MAX_REQUESTS_ENV;
		return -EINVAL;
	}
	if (positive_env(AGENT_IDLE_TIMEOUT_ENV, PROTO_IDLE_LIMIT_TICKS, &cfg->idle_timeout_sec)) {
		*bad = AGENT_IDLE_TIMEOUT_ENV;
		return -EINVAL;
	}
	if (cfg->abstract)
		cfg->max_requests = cfg->idle_timeout_sec = 0;
	return 0;
}

/* DYNPROF_AGENT_ORPHAN_GRACE: seconds, 0 (never) included. */
static int grace_env(struct agent_config *cfg)
{
	const char *text = getenv(AGENT_ORPHAN_GRACE_ENV);

	cfg->orphan_grace_sec = AGENT_ORPHAN_GRACE_DEFAULT;
	return text ? decimal_int(text, 0, INT_MAX, &cfg->orphan_grace_sec) : 0;
}

/*
 * DYNPROF_AGENT_CHIP: a platform_version msprof's analysis knows; any other
 * makes its whole export stop, so it is refused here.
 */
static int chip_env(struct agent_config *cfg)
{
	static const int known[] = { 0, 1, 2, 3, 4, 5, 7, 8, 9, 11, 15, 16 };
	const char *text = getenv(AGENT_CHIP_ENV);

	cfg->chip = AGENT_CHIP_DEFAULT;
	if (!text)
		return 0;
	if (decimal_int(text, 0, 255, &cfg->chip))
		return -EINVAL;
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (known[i] == cfg->chip)
			return 0;
	return -EINVAL;
}

int agent_config_load(struct agent_config *cfg, const char **bad)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->log = getenv(AGENT_LOG_ENV) != NULL;
	if (protocol_env(&cfg->protocol)) {
		*bad = AGENT_PROTOCOL_ENV;
		return -EINVAL;
	}
	if (flavour_env(cfg, &cfg->abstract)) {
		*bad = AGENT_FLAVOUR_ENV;
		return -EINVAL;
	}
	if (limits_env(cfg, bad))
		return -EINVAL;
	if (grace_env(cfg)) {
		*bad = AGENT_ORPHAN_GRACE_ENV;
		return -EINVAL;
	}
	if (chip_env(cfg)) {
		*bad = AGENT_CHIP_ENV;
		return -EINVAL;
	}
	if (key_env(cfg)) {
		*bad = DYNPROF_KEY_ENV;
		return -EINVAL;
	}
	return 0;
}
