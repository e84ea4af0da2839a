/* SPDX-License-Identifier: MIT */
/*
 * Strict decimal numbers, the one parser of whole numbers in dynprof and
 * its agent: ASCII digits only (no sign, no blanks, no "0x", no locale), at
 * least one. Every call returns 0 with *out set, -EINVAL when the text is
 * not a number of that form, or -ERANGE when it is one but lies outside the
 * caller's range (including past UINT64_MAX); *out is left alone on error.
 */
#ifndef DYNPROF_DECIMAL_H
#define DYNPROF_DECIMAL_H

#include <stddef.h>
#include <stdint.h>
#include "shared/compiler.h"

/*
 * The digits that begin s, looking at no more than `len` bytes (SIZE_MAX
 * for a NUL-terminated string: the NUL ends the digits). *used, when
 * given, receives how many digits were read; what follows them is the
 * caller's to judge. -ERANGE above max.
 */
int decimal_prefix(const char *s, size_t len, uint64_t max, uint64_t *out, size_t *used) DP_MUST_CHECK;

/* Exactly the `len` bytes at s, all digits, with a value in [min, max]. */
int decimal_span(const char *s, size_t len, uint64_t min, uint64_t max, uint64_t *out) DP_MUST_CHECK;

/* A whole NUL-terminated string (NULL is -EINVAL), value in [min, max]. */
int decimal_u64(const char *text, uint64_t min, uint64_t max, uint64_t *out) DP_MUST_CHECK;

/* decimal_u64 for an int; 0 <= min <= max. */
int decimal_int(const char *text, int min, int max, int *out) DP_MUST_CHECK;

#endif /* DYNPROF_DECIMAL_H */
