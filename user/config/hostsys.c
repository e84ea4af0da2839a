/* SPDX-License-Identifier: MIT */
/* Which --host-sys items dynprof collects and which go to CANN (see hostsys.h). */
#include <stdio.h>
#include <string.h>

#include "config/hostsys.h"

static const struct {
	const char *item;
	unsigned bit;
} own_items[] = { { "osrt", HOSTSYS_OSRT },
		  { "cpu", HOSTSYS_CPU },
		  { "mem", HOSTSYS_MEM },
		  { "disk", HOSTSYS_DISK },
		  { "network", HOSTSYS_NET } };

bool hostsys_list_has(const char *list, const char *item)
{
	size_t n = strlen(item);

	for (const char *p = list; p && *p;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);

		if (len == n && !strncmp(p, item, n))
			return true;
		p = comma ? comma + 1 : NULL;
	}
	return false;
}

unsigned hostsys_own(const char *list)
{
	unsigned bits = 0;

	for (size_t i = 0; i < sizeof(own_items) / sizeof(own_items[0]); i++)
		if (hostsys_list_has(list, own_items[i].item))
			bits |= own_items[i].bit;
	return bits;
}

static bool is_own(const char *word, size_t len)
{
	for (size_t i = 0; i < sizeof(own_items) / sizeof(own_items[0]); i++)
		if (strlen(own_items[i].item) == len && !strncmp(word, own_items[i].item, len))
			return true;
	return false;
}

void hostsys_for_cann(const char *list, char *out, size_t len)
{
	size_t used = 0;

	if (len)
		out[0] = '\0';
	for (const char *p = list; p && *p && len;) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);

		if (n && !is_own(p, n)) {
			int w = snprintf(out + used, len - used, "%s%.*s", used ? "," : "", (int)n, p);

			if (w < 0 || (size_t)w >= len - used) {
				out[used] = '\0'; /* whole items only */
				return;
			}
			used += (size_t)w;
		}
		p = comma ? comma + 1 : NULL;
	}
}
