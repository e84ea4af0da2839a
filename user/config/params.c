// SPDX-License-Identifier: MIT
/* The params JSON sent to each target (see params.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/chip.h"
#include "config/params.h"
#include "config/params_derive.h"
#include "report/report.h"

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
		report_warning("dynprof: chip not known: %s; AI core%s metric events sent empty; give --chip=NAME|NUMBER (Ascend 910B: --chip=5)",
			       f.why, options_switch(o, "l2") ? " and --l2" : "");
	else if (f.note[0])
		report_warning("dynprof: %s", f.note);
	if (f.chip && f.chip->dynamic_refused)
		report_warning("dynprof: msprof refuses --dynamic on %s; its params are sent as for the other chips.",
			       f.chip->name);
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
