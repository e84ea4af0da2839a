/* SPDX-License-Identifier: MIT */
/*
 * A params JSON being built: every key of one generation's table
 * (shared/msprof_params.h) with its current value, set by the switch
 * derivations, then written as one flat JSON object in table order.
 *
 * Setters never fail on the spot: a key missing from the table (a bug) or
 * an allocation failure is kept in `err` and reported by paramset_json.
 */
#ifndef DYNPROF_PARAMSET_H
#define DYNPROF_PARAMSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/compiler.h"
#include "shared/msprof_params.h"

struct pval {
	const char *key;
	enum mp_type type;
	char *str;   /* MP_STR (malloc'd) */
	int64_t num; /* the others; MP_U64 stored as its bits */
};

struct paramset {
	struct pval *v;
	size_t n;
	int err; /* first failure of a setter: -ENOENT (no such key), -ENOMEM */
};

/* A set holding the table's values. 0 or -ENOMEM. */
int paramset_init(struct paramset *ps, const struct mp_key *tab, size_t n) DP_MUST_CHECK;
void paramset_free(struct paramset *ps);

void paramset_set(struct paramset *ps, const char *key, const char *value);
void paramset_num(struct paramset *ps, const char *key, int64_t value);
void paramset_u64(struct paramset *ps, const char *key, uint64_t value);

/* Current values; "" / 0 for a key not in the set. */
const char *paramset_str(const struct paramset *ps, const char *key);
int64_t paramset_get_num(const struct paramset *ps, const char *key);
bool paramset_is(const struct paramset *ps, const char *key, const char *value);

/*
 * The first string value holding a byte CANN 9.x's parser cannot carry
 * (`"` ends a string there, `\` and control bytes arrive as written, not
 * decoded). Returns the key, `*bad` the byte; NULL when all can be carried.
 */
const char *paramset_uncarried(const struct paramset *ps, char *bad);

/*
 * The JSON text (malloc'd), or NULL with errno set (ps->err, or ENOMEM).
 * escape: JSON-escape strings (v1's parser decodes escapes); else they are
 * written as they are, which paramset_uncarried must have cleared.
 * Integers are written exactly, uint64 included.
 */
char *paramset_json(const struct paramset *ps, bool escape);

#endif /* DYNPROF_PARAMSET_H */
