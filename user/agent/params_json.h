/* SPDX-License-Identifier: MIT */
/*
 * The two JSON readers of CANN's servers, for the top-level members of an
 * object (docs/PROTOCOL.md Part 2 section 5):
 *
 * - lenient, as 9.x's NanoJson: a string ends at the next '"' with its
 *   leading blanks dropped and no escape decoded; ':' and ',' optional;
 *   any 4-byte token starting with 'n' is null; a number with a '.' is a
 *   double, else the int of its leading digits (stoi), and a leading "00",
 *   a trailing '.', a leading '+' or an int32 overflow fail the document;
 *   what follows the top-level object is ignored.
 * - strict, as v1's nlohmann: RFC 8259, escapes decoded, nothing after the
 *   object but blanks.
 *
 * Nested objects and arrays are checked and reported as PJ_OTHER.
 */
#ifndef DYNPROF_AGENT_PARAMS_JSON_H
#define DYNPROF_AGENT_PARAMS_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/compiler.h"

enum pj_kind { PJ_STR, PJ_INT, PJ_DOUBLE, PJ_BOOL, PJ_NULL, PJ_OTHER };

struct pj_member {
	const char *key; /* not NUL-terminated (lenient: as written) */
	size_t klen;
	enum pj_kind kind;
	char *str;  /* PJ_STR: the value, NUL-terminated (the callee may keep it: set to NULL) */
	int64_t i;  /* PJ_INT (int32 range when lenient), PJ_DOUBLE truncated, PJ_BOOL 0/1 */
	uint64_t u; /* PJ_INT: the exact unsigned value when not negative */
};

/*
 * Call fn for each top-level member, in order. Returns 0, -EINVAL when the
 * document fails that reader, -ENOMEM, or fn's negative result.
 */
int pj_parse(const char *text, bool strict, int (*fn)(void *ctx, struct pj_member *m),
	     void *ctx) DP_MUST_CHECK;

#endif /* DYNPROF_AGENT_PARAMS_JSON_H */
