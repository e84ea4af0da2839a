/* SPDX-License-Identifier: MIT */
/*
 * The collection parameters a target receives, as msprof sends them: every
 * key of the target's wire generation (shared/msprof_params.h) at msprof's
 * default for dynamic mode, then what each switch sets, derived keys and
 * the chip's PMU event lists included, each with the JSON type CANN's
 * parser needs. Sending every key makes each session complete on its own:
 * CANN 9.x keeps the previous client's values for any key left out.
 *
 * Errors: convention 3 of docs/ERRORS.md (NULL after printing why).
 */
#ifndef DYNPROF_PARAMS_H
#define DYNPROF_PARAMS_H

#include <stdint.h>

#include "config/options.h"
#include "config/pmu.h"
#include "dynprof/proto.h"

/*
 * The chip the event lists are derived for, found once per run: from the
 * driver (config/chip.h), else a finished PROF_ folder's info.json in
 * `output`, else --chip. NULL when none says: the first call then prints
 * one line naming what is not sent and how to give the chip.
 */
const struct chip_info *params_chip(const struct options *o, const char *output);

/*
 * Build the JSON of generation `gen` (PROTO_V1 or PROTO_V2) for a target
 * whose result folder (as the target sees it) is `result_dir`. Returns a
 * malloc'd string, or NULL after printing why (a value CANN's parser
 * cannot carry, too long for the protocol, out of memory).
 */
char *params_build(const struct options *o, enum proto_version gen, const char *result_dir,
		   const struct chip_info *chip);

/* v1's dataTypeConfig for these switches on `chip` (NULL: not known), as msprof v1 computes it. */
uint64_t params_v1_data_type_config(const struct options *o, const struct chip_info *chip);

#endif /* DYNPROF_PARAMS_H */
