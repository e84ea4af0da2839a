// SPDX-License-Identifier: MIT
/* --dry-run (see dryrun.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/dryrun.h"
#include "config/params.h"
#include "results/output.h"
#include "report/report.h"
#include "session/protodetect.h"

static int print_json(const struct options *o, enum proto_version gen, const char *dir,
		      const struct chip_info *chip, const char *comment)
{
	char *json = params_build(o, gen, dir, chip);

	if (!json)
		return -1;
	if (comment)
		printf("# %s\n", comment);
	printf("%s\n", json);
	free(json);
	return 0;
}

/* --pid=N,M with --protocol=auto: each pid's generation, as a run would pick it. */
static int per_pid(const struct options *o, const char *dir, const struct chip_info *chip)
{
	char comment[256], why[160];

	for (const char *p = o->pid_list;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		int pid;

		if (options_pid_value(p, len, &pid))
			return -1;
		enum proto_version gen = protodetect((int)pid, why, sizeof(why));

		snprintf(comment, sizeof(comment), "pid %d: %s (%s)", (int)pid,
			 proto_version_name(gen), why);
		if (print_json(o, gen, dir, chip, comment))
			return -1;
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

int dryrun_run(const struct options *o)
{
	const struct chip_info *chip;
	char dir[PATH_MAX];
	int rc;

	if (output_prepare(o->output, dir, sizeof(dir)))
		return EXIT_OPTION_ERROR;
	chip = params_chip(o, dir);
	if (o->protocol != PROTO_AUTO)
		rc = print_json(o, o->protocol, dir, chip, NULL);
	else if (o->pid_list && strcmp(o->pid_list, "auto"))
		rc = per_pid(o, dir, chip);
	else
		rc = print_json(o, PROTO_V2, dir, chip, "v2: CANN 8.5.0 and later") ||
		     print_json(o, PROTO_V1, dir, chip, "v1: CANN 8.3 and earlier");
	return rc ? EXIT_OPTION_ERROR : 0;
}
