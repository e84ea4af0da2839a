// SPDX-License-Identifier: MIT
/* msprof-compatible option parsing, params JSON and output path checks. */
#include <stdlib.h>

#include "config/options.h"
#include "out/output.h"
#include "config/params.h"
#include "unit.h"

static int parse(struct options *o, char **argv)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	return options_parse(argc, argv, o);
}

static const char *setting(const struct options *o, const char *key)
{
	for (int i = 0; i < o->nswitches; i++)
		if (!strcmp(o->switches[i].json_key, key))
			return o->switches[i].value;
	return NULL;
}

static void pid_alone_implies_dynamic_on(void)
{
	struct options o;
	char *argv[] = { "dynprof", "--pid=1,2", NULL };

	CHECK_INT(parse(&o, argv), 0);
	CHECK_INT(o.dynamic, 1);
	CHECK_STR(o.pid_list, "1,2");
	CHECK_INT(o.timeout_ms, 60000);
	options_free(&o);
}

static void first_non_option_begins_the_application(void)
{
	struct options o;
	char *argv[] = { "dynprof", "--dynamic=on", "./run.sh", "--pid=3", NULL };

	CHECK_INT(parse(&o, argv), 0);
	CHECK(o.app_argv == &argv[2]);
	CHECK(o.pid_list == NULL);
	options_free(&o);
}

static void task_time_level_sets_level_and_turns_task_time_on(void)
{
	struct options o;
	char *argv[] = { "dynprof", "--pid=1", "--task-time=l2", NULL };

	CHECK_INT(parse(&o, argv), 0);
	CHECK_STR(setting(&o, "taskTime"), "on");
	CHECK_STR(setting(&o, "prof_level"), "l2");
	options_free(&o);
}

static void later_switch_replaces_earlier(void)
{
	struct options o;
	char *argv[] = { "dynprof", "--pid=1", "--hccl=on", "--hccl=off", NULL };

	CHECK_INT(parse(&o, argv), 0);
	CHECK_INT(o.nswitches, 1);
	CHECK_STR(setting(&o, "hcclTrace"), "off");
	options_free(&o);
}

static void frequency_becomes_interval_ms(void)
{
	struct options o;
	char *argv[] = { "dynprof", "--pid=1", "--host-sys-usage-freq=50", NULL };

	CHECK_INT(parse(&o, argv), 0);
	CHECK_STR(setting(&o, "hostProfilingSamplingInterval"), "20");
	options_free(&o);
}

static void timeout_accepts_s_and_ms(void)
{
	struct options o;
	char *a[] = { "dynprof", "--pid=1", "--timeout=500ms", NULL };
	char *b[] = { "dynprof", "--pid=1", "--timeout=7", NULL };
	char *c[] = { "dynprof", "--pid=1", "--timeout=0", NULL };

	CHECK_INT(parse(&o, a), 0);
	CHECK_INT(o.timeout_ms, 500);
	CHECK_INT(parse(&o, b), 0);
	CHECK_INT(o.timeout_ms, 7000);
	CHECK(parse(&o, c) != 0);
}

static void storage_limit_domain(void)
{
	struct options o;
	char *ok[] = { "dynprof", "--pid=1", "--storage-limit=200MB", NULL };
	char *low[] = { "dynprof", "--pid=1", "--storage-limit=199MB", NULL };
	char *unit[] = { "dynprof", "--pid=1", "--storage-limit=300GB", NULL };
	char *high[] = { "dynprof", "--pid=1", "--storage-limit=4294967296MB", NULL };

	CHECK_INT(parse(&o, ok), 0);
	options_free(&o);
	CHECK(parse(&o, low) != 0);
	CHECK(parse(&o, unit) != 0);
	CHECK(parse(&o, high) != 0);
}

static void environment_needs_name_value_pairs(void)
{
	struct options o;
	char *ok[] = { "dynprof", "--pid=1", "--environment=A=1;B=2", NULL };
	char *bad[] = { "dynprof", "--pid=1", "--environment=A=1;B", NULL };

	CHECK_INT(parse(&o, ok), 0);
	options_free(&o);
	CHECK(parse(&o, bad) != 0);
}

static void params_hold_result_dir_and_given_switches_only(void)
{
	struct options o;
	char *argv[] = { "dynprof", "--pid=1", "--aicpu=on", NULL };
	char *json;

	CHECK_INT(parse(&o, argv), 0);
	json = params_build(&o, "/data/out");
	CHECK_STR(json, "{\"result_dir\":\"/data/out\",\"aicpuTrace\":\"on\"}");
	free(json);
	options_free(&o);
}

static void forbidden_output_characters(void)
{
	CHECK_INT(output_forbidden_char("/data/prof_1"), 0);
	CHECK_INT(output_forbidden_char("/data/a$b"), '$');
	CHECK_INT(output_forbidden_char("/data/a\tb"), '\t');
	CHECK_INT(output_forbidden_char("/d/`x`"), '`');
	CHECK_INT(output_forbidden_char("/d/x\x7f"), 0x7f);
}

int main(void)
{
	RUN(pid_alone_implies_dynamic_on);
	RUN(first_non_option_begins_the_application);
	RUN(task_time_level_sets_level_and_turns_task_time_on);
	RUN(later_switch_replaces_earlier);
	RUN(frequency_becomes_interval_ms);
	RUN(timeout_accepts_s_and_ms);
	RUN(storage_limit_domain);
	RUN(environment_needs_name_value_pairs);
	RUN(params_hold_result_dir_and_given_switches_only);
	RUN(forbidden_output_characters);
	UNIT_EXIT();
}
