// SPDX-License-Identifier: MIT
/* The params JSON sent to each target (see params.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/chip.h"
#include "config/params.h"
#include "config/params_derive.h"
#include "out/report.h"
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

/* ---- the chip, once per run ------------------------------------------------- */

static const struct chip_info *run_chip;
static bool run_chip_known;

const struct chip_info *params_chip(const struct options *o, const char *output)
{
	struct chip_found f;

	if (run_chip_known)
		return run_chip;
	chip_detect(o->chip, output, &f);
	run_chip = f.chip;
	run_chip_known = true;
	if (!f.chip)
		report_warning("dynprof: the chip is not known (%s): the AI core metric events%s are sent empty. Give it with --chip=<name|number>, e.g. --chip=CHIP_V4_1_0 (5) for Ascend 910B.",
			       f.why, options_switch(o, "l2") ? ", the --l2 events" : "");
	else if (f.note[0])
		report_warning("dynprof: %s", f.note);
	return run_chip;
}

/* ---- the JSON ------------------------------------------------------------------ */

static bool refuse_uncarried(const struct paramset *ps)
{
	char bad, name[16];
	const char *key = paramset_uncarried(ps, &bad);

	if (!key)
		return false;
	if ((unsigned char)bad < 0x20 || bad == 0x7f)
		snprintf(name, sizeof(name), "0x%02x", (unsigned char)bad);
	else
		snprintf(name, sizeof(name), "'%c'", bad);
	report_error("dynprof: the value of %s holds %s, which CANN's parameter parser cannot carry (it ends strings at '\"' and decodes no escapes): \"%s\". Nothing was sent.",
		     key, name, paramset_str(ps, key));
	return true;
}

char *params_build(const struct options *o, enum proto_version gen, const char *result_dir,
		   const struct chip_info *chip)
{
	bool v1 = gen == PROTO_V1;
	struct paramset ps;
	char *text;
	size_t len;

	if (paramset_init(&ps, v1 ? mp_v1_keys : mp_v2_keys, v1 ? mp_v1_nkeys : mp_v2_nkeys))
		goto oom;
	paramset_set(&ps, "result_dir", result_dir);
	paramset_num(&ps, "msprofBinPid", getpid());
	if (v1)
		params_v1_derive(&ps, o, chip);
	else
		params_v2_derive(&ps, o, chip);
	/* v1's parser (nlohmann) decodes escapes; 9.x's (NanoJson) does not. */
	if (!v1 && refuse_uncarried(&ps)) {
		paramset_free(&ps);
		return NULL;
	}
	text = paramset_json(&ps, v1);
	paramset_free(&ps);
	if (!text)
		goto oom;
	len = strlen(text);
	if (len >= PROTO_DATA_MAX) {
		report_error("dynprof: the collection parameters take %zu bytes, more than the protocol's %d (result_dir takes %zu, app_env %zu): shorten --output or --environment.",
			     len, PROTO_DATA_MAX - 1, strlen(result_dir),
			     strlen(params_sw(o, "environment", "")));
		free(text);
		return NULL;
	}
	return text;
oom:
	report_error("dynprof: out of memory building the collection parameters");
	return NULL;
}
