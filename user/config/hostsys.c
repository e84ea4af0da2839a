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

const char *hostsys_own_words(unsigned what, char *buf, size_t len)
{
	static const struct {
		unsigned bit;
		const char *word;
	} items[] = { { HOSTSYS_OSRT, "osrt" },
		      { HOSTSYS_CPU, "cpu" },
		      { HOSTSYS_MEM, "mem" },
		      { HOSTSYS_DISK, "disk" },
		      { HOSTSYS_NET, "network" } };
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(items) / sizeof(items[0]); i++)
		if ((what & items[i].bit) && n < len)
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "," : "", items[i].word);
	return buf;
}
