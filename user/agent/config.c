// SPDX-License-Identifier: MIT
/* Agent settings from the environment (see config.h). */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "agent/config.h"
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

/* Unset or "file": the file socket; "abstract": CANN 8.5.0's name (v2 only). */
static int flavour_env(enum proto_version protocol, int *abstract)
{
	const char *text = getenv(AGENT_FLAVOUR_ENV);

	*abstract = text && !strcmp(text, "abstract");
	if (text && !*abstract && strcmp(text, "file"))
		return -EINVAL;
	return *abstract && protocol != PROTO_V2 ? -EINVAL : 0;
}

int agent_config_load(struct agent_config *cfg, const char **bad)
{
	int key;

	memset(cfg, 0, sizeof(*cfg));
	cfg->log = getenv(AGENT_LOG_ENV) != NULL;
	if (protocol_env(&cfg->protocol)) {
		*bad = AGENT_PROTOCOL_ENV;
		return -EINVAL;
	}
	if (positive_env(AGENT_MAX_REQUESTS_ENV, PROTO_MAX_REQUESTS_PER_CONN, &cfg->max_requests)) {
		*bad = AGENT_MAX_REQUESTS_ENV;
		return -EINVAL;
	}
	if (positive_env(AGENT_IDLE_TIMEOUT_ENV, PROTO_IDLE_DISCONNECT_SEC, &cfg->idle_timeout_sec)) {
		*bad = AGENT_IDLE_TIMEOUT_ENV;
		return -EINVAL;
	}
	if (flavour_env(cfg->protocol, &cfg->abstract)) {
		*bad = AGENT_FLAVOUR_ENV;
		return -EINVAL;
	}
	/* Only v2 servers honour the key; v1 servers key on their pid alone. */
	key = parse_positive(getenv(DYNPROF_KEY_ENV));
	cfg->key = cfg->protocol == PROTO_V2 && key > 0 ? key : 0;
	return 0;
}
