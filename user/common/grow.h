/* SPDX-License-Identifier: MIT */
/* Growing arrays: room for one more item, doubling the capacity. */
#ifndef DYNPROF_GROW_H
#define DYNPROF_GROW_H

#include <stddef.h>

#include "shared/compiler.h"

/*
 * Make *items (of *cap items of `size` bytes, `n` used) hold at least n + 1,
 * doubling from `first`. 0, or -ENOMEM with the array unchanged.
 */
int grow_for_one(void **items, size_t *cap, size_t n, size_t size, size_t first) DP_MUST_CHECK;

#endif /* DYNPROF_GROW_H */
