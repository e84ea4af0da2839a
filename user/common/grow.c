// SPDX-License-Identifier: MIT
/* Growing arrays (see grow.h). */
#include <errno.h>
#include <stdlib.h>

#include "common/grow.h"

int grow_for_one(void **items, size_t *cap, size_t n, size_t size, size_t first)
{
	size_t want;
	void *more;

	if (n < *cap)
		return 0;
	want = *cap ? *cap * 2 : first;
	more = realloc(*items, want * size);
	if (!more)
		return -ENOMEM;
	*items = more;
	*cap = want;
	return 0;
}
