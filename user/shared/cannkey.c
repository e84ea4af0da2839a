// SPDX-License-Identifier: MIT
/* DYNAMIC_PROFILING_KEY_PID, read as CANN reads it (see cannkey.h). */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>

#include "shared/cannkey.h"
#include "shared/decimal.h"

int cann_key_parse(const char *text, long *value)
{
	const char *p = text;
	int neg = 0;
	uint64_t v;

	if (!text || !*text) {
		*value = 0;
		return 0;
	}
	/* As C++ stoi with the whole text consumed: blanks, a sign, digits, nothing after. */
	while (isspace((unsigned char)*p))
		p++;
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	if (decimal_u64(p, 0, (uint64_t)INT32_MAX + (uint64_t)neg, &v))
		return -EINVAL;
	*value = neg ? -(long)v : (long)v;
	return 0;
}
