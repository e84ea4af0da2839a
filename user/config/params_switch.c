// SPDX-License-Identifier: MIT
/* The switches as the derivations read them (see params_derive.h). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "config/params_derive.h"
#include "shared/decimal.h"

const char *params_sw(const struct options *o, const char *option, const char *def)
{
	const char *v = options_switch(o, option);

	return v ? v : def;
}

bool params_sw_is(const struct options *o, const char *option, const char *value)
{
	const char *v = options_switch(o, option);

	return v && !strcmp(v, value);
}

int params_interval_ms(const struct options *o, const char *option)
{
	int hz;

	if (decimal_int(params_sw(o, option, ""), 1, 1000000, &hz))
		return -1;
	return 1000 / hz;
}

/* Custom:<list> keeps its name and passes the list lower-cased (msprof). */
static void custom_metric(const char *v, char *name, size_t nlen, char *events, size_t elen)
{
	size_t i;

	for (i = 0; v[7 + i] && i + 1 < elen; i++)
		events[i] = (char)tolower((unsigned char)v[7 + i]);
	events[i] = '\0';
	snprintf(name, nlen, "Custom:%s", events);
}

static void one_metric(const char *metric, const struct chip_info *chip, bool aic, char *name,
		       size_t nlen, char *events, size_t elen)
{
	if (!strncmp(metric, "Custom:", 7)) {
		custom_metric(metric, name, nlen, events, elen);
		return;
	}
	/* On CHIP_V4_1_0 msprof renames the AI core's PipeUtilization (config_manager.cpp). */
	if (aic && chip && chip->id == CHIP_V4_1_0 && !strcmp(metric, "PipeUtilization"))
		metric = "PipeUtilizationExct";
	snprintf(name, nlen, "%s", metric);
	snprintf(events, elen, "%s", pmu_metric_events(chip, metric));
}

void params_metrics(const struct options *o, const struct chip_info *chip, const char *aiv_switch,
		    struct metric_choice *m)
{
	const char *metric = params_sw(o, "aic-metrics", chip ? chip->default_metric : "PipeUtilization");
	/* The AIV metric follows the AIC one (Nano: its own switch). */
	const char *aiv = aiv_switch ? aiv_switch : metric;

	one_metric(metric, chip, true, m->aic, sizeof(m->aic), m->aic_events, sizeof(m->aic_events));
	one_metric(aiv, chip, false, m->aiv, sizeof(m->aiv), m->aiv_events, sizeof(m->aiv_events));
}

int params_set_metrics(struct paramset *ps, const struct options *o, const struct chip_info *chip,
		       const char *aiv_switch)
{
	struct metric_choice m;
	int ms;

	params_metrics(o, chip, aiv_switch, &m);
	paramset_set(ps, "ai_core_metrics", m.aic);
	paramset_set(ps, "ai_core_profiling_events", m.aic_events);
	paramset_set(ps, "aiv_metrics", m.aiv);
	paramset_set(ps, "aiv_profiling_events", m.aiv_events);
	ms = params_interval_ms(o, "aic-freq");
	if (ms > 0) {
		paramset_num(ps, "aicore_sampling_interval", ms);
		paramset_num(ps, "aiv_sampling_interval", ms);
	}
	return ms;
}

void params_set_task_logs(struct paramset *ps, const struct chip_info *chip)
{
	if (chip && chip->stars) {
		paramset_set(ps, "stars_acsq_task", "on");
	} else {
		paramset_set(ps, "hwts_log", "on");
		paramset_set(ps, "hwts_log1", "on");
	}
	paramset_set(ps, "ts_memcpy", "on");
}
