/* SPDX-License-Identifier: MIT */
/* Inside config/params*.c: each generation's switch derivations. */
#ifndef DYNPROF_PARAMS_DERIVE_H
#define DYNPROF_PARAMS_DERIVE_H

#include "config/options.h"
#include "config/paramset.h"
#include "config/pmu.h"

/* The switch's value, else `def`. */
const char *params_sw(const struct options *o, const char *option, const char *def);
bool params_sw_is(const struct options *o, const char *option, const char *value);
/* A frequency switch (Hz) as msprof's interval: 1000/Hz ms; -1 when not given. */
int params_interval_ms(const struct options *o, const char *option);

/* The AI core metric msprof picks (switch, else the chip's default) and its events. */
struct metric_choice {
	char aic[160]; /* ai_core_metrics */
	char aiv[160]; /* aiv_metrics */
	char aic_events[160];
	char aiv_events[160];
};
void params_metrics(const struct options *o, const struct chip_info *chip, const char *aiv_switch,
		    struct metric_choice *m);

/*
 * The metric keys and their events, and --aic-freq's two intervals: the
 * same in both generations. Returns the --aic-freq interval (-1: not given).
 */
int params_set_metrics(struct paramset *ps, const struct options *o, const struct chip_info *chip,
		       const char *aiv_switch);

/* The task logs a task-time switch turns on: STARS logs or HWTS logs, and ts_memcpy. */
void params_set_task_logs(struct paramset *ps, const struct chip_info *chip);

void params_v2_derive(struct paramset *ps, const struct options *o, const struct chip_info *chip);
void params_v1_derive(struct paramset *ps, const struct options *o, const struct chip_info *chip);

#endif /* DYNPROF_PARAMS_DERIVE_H */
