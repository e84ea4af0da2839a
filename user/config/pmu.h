/* SPDX-License-Identifier: MIT */
/*
 * The chips msprof knows and what it derives from them (docs/PROTOCOL.md Part 2
 * section 4.6): the default AI core metric, the PMU event list of each
 * metric, the --l2 event list, and the features that change the params
 * (STARS task logs, SOC PMU, AI core low-power). Data from oam-tools'
 * profimpl platform tables; where this table is a guess it says so in
 * docs/dynprof.8 ("CHIPS").
 */
#ifndef DYNPROF_PMU_H
#define DYNPROF_PMU_H

#include <stdbool.h>

/* The chip numbers of halGetDeviceInfo(INFO_TYPE_VERSION) bits 8..15. */
enum chip_id {
	CHIP_UNKNOWN = -1,
	CHIP_MINI = 0,
	CHIP_CLOUD = 1,
	CHIP_MDC = 2,
	CHIP_DC = 4,
	CHIP_V4_1_0 = 5,
	CHIP_MINI_V3 = 7,
	CHIP_TINY_V1 = 8,
	CHIP_NANO_V1 = 9,
	CHIP_MDC_MINI_V3 = 11,
	CHIP_MDC_LITE = 12,
	CHIP_CLOUD_V3 = 15,
	CHIP_CLOUD_V4 = 16,
	CHIP_MDC_V2 = 17,
	CHIP_MDC_LITE_V2 = 18,
};

struct chip_info {
	int id;
	const char *name;     /* msprof's platform name, e.g. "CHIP_V4_1_0" */
	const char *alias;    /* the product name users know, e.g. "ascend910b" */
	bool stars;           /* task logs from STARS (stars_acsq_task), not HWTS */
	bool soc_pmu;         /* --l2 also fills npuEvents */
	bool lpm;             /* AI core low-power info (ai_core_lpm) */
	bool aiv;             /* AI vector core metrics (v1 AIV_METRICS bit) */
	bool dynamic_refused; /* msprof refuses --dynamic there */
	const char *default_metric;
	const char *l2_events;
	const struct metric_events *metrics; /* this chip's own lists, NULL-ended; NULL: none */
};

struct metric_events {
	const char *metric;
	const char *events;
};

/* The chip for a number, NULL when msprof does not know it. */
const struct chip_info *chip_by_id(int id);

/* The chip for a name (msprof's, the alias, case-insensitive) or a number. */
const struct chip_info *chip_by_text(const char *text);

/* Is `name` an AI core metric msprof accepts (Custom:... aside)? */
bool pmu_metric_known(const char *name);

/*
 * The event list of `metric` on `chip` ("" when the chip has none for it),
 * as msprof's GetAicoreEvents gives it.
 */
const char *pmu_metric_events(const struct chip_info *chip, const char *metric);

#endif /* DYNPROF_PMU_H */
