/* SPDX-License-Identifier: MIT */
/*
 * The params keys CANN's servers read, with their JSON types and the value
 * msprof sends when no switch is given (dynamic attach or launch mode).
 * Data only: one table per wire generation (docs/PROTOCOL.md Part 2, sections
 * 4.3 and 6). dynprof builds its JSON from these; the agent takes the
 * types from them to parse as CANN's parsers do.
 *
 * Values that depend on the run (result_dir, msprofBinPid) or on the chip
 * (metrics, PMU events, hwts/stars, ai_core_lpm) hold a base value here;
 * config/params_v2.c and params_v1.c fill them.
 */
#ifndef DYNPROF_MSPROF_PARAMS_H
#define DYNPROF_MSPROF_PARAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum mp_type {
	MP_STR,  /* JSON string */
	MP_INT,  /* JSON integer (int32 in CANN) */
	MP_BOOL, /* JSON true/false */
	MP_U64,  /* JSON integer, full uint64 (v1 dataTypeConfig) */
};

struct mp_key {
	const char *key;
	enum mp_type type;
	const char *str; /* MP_STR */
	int64_t num;     /* MP_INT, MP_BOOL (0/1), MP_U64 */
};

/* msprof 9.1 (oam-tools v9.1.0): 134 keys. */
extern const struct mp_key mp_v2_keys[];
extern const size_t mp_v2_nkeys;

/* msprof v1 (MindStudio msprof, CANN <= 8.3): the keys dynprof sends. */
extern const struct mp_key mp_v1_keys[];
extern const size_t mp_v1_nkeys;

/* The entry for `key` (length `len`) in a table, or NULL. */
const struct mp_key *mp_find(const struct mp_key *tab, size_t n, const char *key, size_t len);

#endif /* DYNPROF_MSPROF_PARAMS_H */
