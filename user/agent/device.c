// SPDX-License-Identifier: MIT
/* Device-set state: explicit ids, else the card node the process holds. */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared/cards.h"
#include "agent/device.h"

#define WORDS ((AGENT_DEVICE_ID_MAX + 64) / 64)

/* A bitmap, so set_device needs no lock and never waits on the server. */
static _Atomic uint64_t explicit_ids[WORDS];

/* Written at start and shutdown only, while the server thread is not running. */
static struct card_patterns patterns;
static int patterns_loaded;

int agent_devices_init(void)
{
	const char *list = getenv(CARDS_PATTERNS_ENV);
	int rc = 0;

	if (list && *list)
		rc = cards_parse_patterns(&patterns, list);
	else
		cards_default_patterns(&patterns);
	patterns_loaded = rc == 0;
	return rc;
}

void agent_devices_fini(void)
{
	if (patterns_loaded)
		cards_free_patterns(&patterns);
	patterns_loaded = 0;
}

int agent_devices_mark(int id)
{
	if (id < 0 || id > AGENT_DEVICE_ID_MAX)
		return -EINVAL;
	atomic_fetch_or(&explicit_ids[id / 64], UINT64_C(1) << (id % 64));
	return 0;
}

static void explicit_current(struct agent_devset *out)
{
	for (int w = 0; w < WORDS; w++) {
		uint64_t bits = atomic_load(&explicit_ids[w]);

		for (int b = 0; b < 64 && bits; b++, bits >>= 1)
			if ((bits & 1) && out->count < AGENT_DEVSET_MAX)
				out->id[out->count++] = w * 64 + b;
	}
}

void agent_devices_current(struct agent_devset *out)
{
	int held;

	out->count = 0;
	explicit_current(out);
	if (out->count || !patterns_loaded)
		return;
	/* Preloaded processes never call set_device: an open card node counts. */
	held = cards_held_by_pid(&patterns, (int)getpid());
	if (held >= 0)
		out->id[out->count++] = held;
}

void agent_devset_format(const struct agent_devset *d, const char *sep, int trailing, char *buf, size_t len)
{
	size_t used = 0;

	if (len == 0)
		return;
	buf[0] = '\0';
	for (int i = 0; i < d->count; i++) {
		int last = i == d->count - 1;
		int n = snprintf(buf + used, len - used, "%d%s", d->id[i], last && !trailing ? "" : sep);

		if (n < 0 || (size_t)n >= len - used) {
			buf[used] = '\0'; /* cut after the last id that fits whole */
			return;
		}
		used += (size_t)n;
	}
}
