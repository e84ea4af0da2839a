// SPDX-License-Identifier: MIT
/* Strict decimal numbers (see user/shared/decimal.h). */
#include <errno.h>
#include <string.h>

#include "shared/decimal.h"

int decimal_prefix(const char *s, size_t len, uint64_t max, uint64_t *out, size_t *used)
{
	uint64_t v = 0;
	size_t n = 0;
	int err = 0;

	/* Not isdigit(): no locale may widen the set. */
	for (; n < len && s[n] >= '0' && s[n] <= '9'; n++) {
		uint64_t d = (uint64_t)(s[n] - '0');

		/* Past max the digits are still read, so *used ends the whole run. */
		if (err || d > max || v > (max - d) / 10)
			err = -ERANGE;
		else
			v = v * 10 + d;
	}
	if (used)
		*used = n;
	if (n == 0)
		return -EINVAL;
	if (err)
		return err;
	*out = v;
	return 0;
}

int decimal_span(const char *s, size_t len, uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t v;
	size_t used;
	int err = decimal_prefix(s, len, max, &v, &used);

	if (err != -EINVAL && used != len)
		return -EINVAL; /* junk after the digits wins over their range */
	if (err)
		return err;
	if (v < min)
		return -ERANGE;
	*out = v;
	return 0;
}

int decimal_u64(const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
	return text ? decimal_span(text, strlen(text), min, max, out) : -EINVAL;
}

int decimal_int(const char *text, int min, int max, int *out)
{
	uint64_t v;
	int err;

	if (min < 0 || max < min)
		return -EINVAL;
	err = decimal_u64(text, (uint64_t)min, (uint64_t)max, &v);
	if (!err)
		*out = (int)v;
	return err;
}
