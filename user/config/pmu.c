// SPDX-License-Identifier: MIT
/* The chips and their PMU lists (see pmu.h). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config/pmu.h"
#include "shared/array_size.h"
#include "shared/decimal.h"

#define PU "PipeUtilization"
#define PUEXCT "PipeUtilizationExct"
#define PEU "PipelineExecuteUtilization"

/* platform_interface.h: the lists of every chip that does not override them. */
static const struct metric_events default_metrics[] = {
	{ PU, "0x8,0xa,0x9,0xb,0xc,0xd,0x54,0x55" },
	{ PUEXCT, "0x416,0x417,0x9,0x302,0xc,0x303,0x54,0x55" },
	{ "ArithmeticUtilization", "0x49,0x4a,0x4b,0x4c,0x4d,0x4e,0x4f" },
	{ "Memory", "0x15,0x16,0x31,0x32,0xf,0x10,0x12,0x13" },
	{ "MemoryL0", "0x1b,0x1c,0x21,0x22,0x27,0x28,0x29,0x2a" },
	{ "MemoryUB", "0x10,0x13,0x37,0x38,0x3d,0x3e,0x43,0x44" },
	{ "ResourceConflictRatio", "0x64,0x65,0x66" },
	{ "L2Cache", "0x500,0x502,0x504,0x506,0x508,0x50a" },
	{ "MemoryAccess", "0x32,0x3d,0x3e,0x206,0x20c,0x50c,0x50d,0x50e" },
	{ PEU, "0x12c,0x49,0x4a,0x9,0x302,0xc,0xd,0x303" },
	{ NULL, NULL },
};

static const struct metric_events mini_v3_metrics[] = {
	{ "MemoryUB", "0x37,0x38,0x1a5,0x1a6,0x17f,0x180,0x191" },
	{ NULL, NULL },
};

/* david (CLOUD_V3, CLOUD_V4): its own lists, and "" for what it lacks. */
static const struct metric_events david_metrics[] = {
	{ PU, "0x501,0x301,0x1,0x701,0x202,0x203,0x34,0x35,0x714" },
	{ PUEXCT, "" },
	{ "ArithmeticUtilization", "0x323,0x324" },
	{ "Memory", "0x400,0x401,0x56f,0x571,0x570,0x572,0x707,0x709" },
	{ "MemoryL0", "0x304,0x703,0x306,0x705,0x712,0x30a,0x308" },
	{ "MemoryUB", "0x3,0x5,0x70c,0x206,0x204,0x571,0x572" },
	{ "ResourceConflictRatio", "0x540,0x556,0x502,0x528" },
	{ "L2Cache", "0x424,0x425,0x426,0x42a,0x42b,0x42c" },
	{ "MemoryAccess", "" },
	{ PEU, "" },
	{ NULL, NULL },
};

/* nano_platform.cpp: three metrics only. */
static const struct metric_events nano_metrics[] = {
	{ PU, "0x300,0x400,0x100,0x200,0x201,0x202,0x302,0x203,0x101,0x102" },
	{ "Memory", "0x201,0x202,0x204,0x205" },
	{ "MemoryUB", "0x206,0x207,0x208,0x209,0x303,0x304,0x106,0x107" },
	{ PUEXCT, "" },
	{ "ArithmeticUtilization", "" },
	{ "MemoryL0", "" },
	{ "ResourceConflictRatio", "" },
	{ "L2Cache", "" },
	{ "MemoryAccess", "" },
	{ PEU, "" },
	{ NULL, NULL },
};

#define L2_DEFAULT "0xF6,0xFB,0xFC,0xBF,0x90,0x91,0x9C,0x9D"
#define L2_CLOUD "0x5b,0x59,0x5c,0x7d,0x7e,0x71,0x79,0x7c"
#define L2_DC "0x78,0x79,0x77,0x71,0x6a,0x6c,0x74,0x62"
#define L2_V3 "0x00,0x81,0x82,0x83,0x74,0x75"
#define L2_V4 "0x00,0x88,0x89,0x8A,0x74,0x75,0x97"

/* Features of a chip (struct chip_info). */
#define F_STARS 0x1
#define F_SOC_PMU 0x2
#define F_LPM 0x4
#define F_AIV 0x8
#define F_REFUSED 0x10 /* msprof refuses --dynamic there */

#define CHIP(id, name, alias, f, metric, l2, own)                                                 \
	{                                                                                         \
		id, name, alias, (f)&F_STARS, (f)&F_SOC_PMU, (f)&F_LPM, (f)&F_AIV, (f)&F_REFUSED, \
			metric, l2, own                                                           \
	}

/*
 * STARS, SOC PMU, LPM and AIV as the platform tables of CLOUD, DC,
 * CLOUD_V2 (CHIP_V4_1_0), MINI_V3, NANO and the david chips list them; the
 * MDC and TINY rows (chips msprof refuses --dynamic on) are assumed.
 */
static const struct chip_info chips[] = {
	CHIP(CHIP_MINI, "MINI", "ascend310", F_LPM | F_REFUSED, PU, L2_DEFAULT, NULL),
	CHIP(CHIP_CLOUD, "CLOUD", "ascend910", 0, PU, L2_CLOUD, NULL),
	CHIP(CHIP_MDC, "MDC", "mdc", F_LPM | F_AIV | F_REFUSED, PU, L2_DC, NULL),
	CHIP(CHIP_DC, "DC", "ascend310p", F_LPM, PU, L2_DC, NULL),
	CHIP(CHIP_V4_1_0, "CHIP_V4_1_0", "ascend910b", F_STARS | F_SOC_PMU | F_LPM | F_AIV, PU,
	     L2_DEFAULT, NULL),
	CHIP(CHIP_MINI_V3, "MINI_V3", "ascend310b", F_STARS | F_LPM | F_AIV, PEU, L2_DEFAULT,
	     mini_v3_metrics),
	CHIP(CHIP_TINY_V1, "TINY_V1", "tiny_v1", F_STARS | F_LPM | F_AIV | F_REFUSED, PEU,
	     L2_DEFAULT, NULL),
	CHIP(CHIP_NANO_V1, "NANO_V1", "nano_v1", 0, PU, L2_DEFAULT, nano_metrics),
	CHIP(CHIP_MDC_MINI_V3, "MDC_MINI_V3", "mdc_mini_v3", F_STARS | F_LPM | F_AIV | F_REFUSED,
	     PEU, L2_DEFAULT, NULL),
	CHIP(CHIP_MDC_LITE, "MDC_LITE", "mdc_lite", F_STARS | F_LPM | F_AIV | F_REFUSED, PEU, L2_DC, NULL),
	CHIP(CHIP_CLOUD_V3, "CLOUD_V3", "david", F_STARS | F_SOC_PMU | F_LPM | F_AIV, PU, L2_V3,
	     david_metrics),
	CHIP(CHIP_CLOUD_V4, "CLOUD_V4", "david_v121", F_STARS | F_SOC_PMU | F_LPM | F_AIV, PU,
	     L2_V4, david_metrics),
	CHIP(CHIP_MDC_V2, "MDC_V2", "mdc_v2", F_STARS | F_LPM | F_AIV | F_REFUSED, PU, L2_DEFAULT, NULL),
	CHIP(CHIP_MDC_LITE_V2, "MDC_LITE_V2", "mdc_lite_v2", F_STARS | F_LPM | F_AIV | F_REFUSED,
	     PU, L2_DEFAULT, NULL),
};

const struct chip_info *chip_by_id(int id)
{
	for (size_t i = 0; i < ARRAY_SIZE(chips); i++)
		if (chips[i].id == id)
			return &chips[i];
	return NULL;
}

const struct chip_info *chip_by_text(const char *text)
{
	int id;

	if (!decimal_int(text, 0, 255, &id))
		return chip_by_id(id);
	for (size_t i = 0; i < ARRAY_SIZE(chips); i++)
		if (!strcasecmp(chips[i].name, text) || !strcasecmp(chips[i].alias, text))
			return &chips[i];
	return NULL;
}

static const char *lookup(const struct metric_events *list, const char *metric)
{
	for (; list && list->metric; list++)
		if (!strcmp(list->metric, metric))
			return list->events;
	return NULL;
}

bool pmu_metric_known(const char *name)
{
	return lookup(default_metrics, name) != NULL;
}

const char *pmu_metric_events(const struct chip_info *chip, const char *metric)
{
	const char *own = chip ? lookup(chip->metrics, metric) : NULL;
	const char *common = lookup(default_metrics, metric);

	if (!chip)
		return "";
	return own ? own : common ? common : "";
}
