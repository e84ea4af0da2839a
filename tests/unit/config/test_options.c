// SPDX-License-Identifier: MIT
/* msprof-compatible option parsing, params JSON and output path checks. */
#include <stdlib.h>

#include "config/options.h"
#include "results/output.h"
#include "unit.h"

static int parse(struct options *o, char **argv)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	return options_parse(argc, argv, o);
}

TEST(pid_alone_implies_dynamic_on)
{
	struct options o;
	char *argv[] = { "dynprof", "--pid=1,2", NULL };

	CHECK_INT(parse(&o, argv), 0);
	CHECK_INT(o.dynamic, 1);
	CHECK_STR(o.pid_list, "1,2");
	CHECK_INT(o.timeout_ms, 60000);
	options_free(&o);
}

TEST(trace_on_off_and_its_fold_threshold)
{
	struct options o;
	char *a[] = { "dynprof", "--pid=1", NULL };
	char *b[] = { "dynprof", "--pid=1", "--trace=on", "--trace-fold=2ms", NULL };
	char *c[] = { "dynprof", "--pid=1", "--trace=on", "--trace-fold=0", NULL };
	char *d[] = { "dynprof", "--pid=1", "--trace=yes", NULL };
	char *e[] = { "dynprof", "--pid=1", "--trace-fold=2s", NULL };
	char *f[] = { "dynprof", "--pid=1", "--trace-fold=10", NULL };
	char *g[] = { "dynprof", "--pid=1", "--trace", NULL };
	char *h[] = { "dynprof", "--list", "--trace=on", NULL };
	char *i[] = { "dynprof", "--remote=/run/ctl", "--trace=on", "stop", NULL };

	CHECK_INT(parse(&o, a), 0);
	CHECK(!o.trace && o.trace_fold_ns == 100000); /* off; 100 us */
	options_free(&o);
	CHECK_INT(parse(&o, b), 0);
	CHECK(o.trace && o.trace_fold_ns == 2000000);
	options_free(&o);
	CHECK_INT(parse(&o, c), 0);
	CHECK(o.trace && o.trace_fold_ns == 0);
	options_free(&o);
	CHECK(parse(&o, d) != 0);
	CHECK(parse(&o, e) != 0); /* past 1 s */
	CHECK(parse(&o, f) != 0); /* a unit is needed */
	CHECK(parse(&o, g) != 0);
	CHECK(parse(&o, h) != 0); /* nothing of a run to trace */
	CHECK(parse(&o, i) != 0);
}

TEST(first_non_option_begins_the_application)
{
	struct options o;
	char *argv[] = { "dynprof", "--dynamic=on", "./run.sh", "--pid=3", NULL };

	CHECK_INT(parse(&o, argv), 0);
	CHECK(o.app_argv == &argv[2]);
	CHECK(o.pid_list == NULL);
	options_free(&o);
}

TEST(remote_takes_the_command_words_and_timeout_only)
{
	struct options o;
	char *a[] = { "dynprof", "--remote=/run/ctl", "--timeout=5s", "status", "--json", NULL };
	char *b[] = { "dynprof", "--remote=/run/ctl", NULL };
	char *c[] = { "dynprof", "--remote=/run/ctl", "--pid=3", "stop", NULL };
	char *d[] = { "dynprof", "--remote=", "stop", NULL };
	char *e[] = { "dynprof", "--remote=/run/ctl", "--control=unix:/x", "stop", NULL };

	CHECK_INT(parse(&o, a), 0);
	CHECK_STR(o.remote, "/run/ctl");
	CHECK(o.app_argv == &a[3]);
	CHECK_INT(o.timeout_ms, 5000);
	options_free(&o);
	CHECK(parse(&o, b) != 0);
	CHECK(parse(&o, c) != 0);
	CHECK(parse(&o, d) != 0);
	CHECK(parse(&o, e) != 0);
}

TEST(later_switch_replaces_earlier)
{
	struct options o;
	char *argv[] = { "dynprof", "--pid=1", "--hccl=on", "--hccl=off", NULL };

	CHECK_INT(parse(&o, argv), 0);
	CHECK_INT(o.nswitches, 1);
	CHECK_STR(options_switch(&o, "hccl"), "off");
	options_free(&o);
}

TEST(timeout_accepts_s_and_ms)
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

TEST(storage_limit_domain)
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

TEST(environment_needs_name_value_pairs)
{
	struct options o;
	char *ok[] = { "dynprof", "--pid=1", "--environment=A=1;B=2", NULL };
	char *bad[] = { "dynprof", "--pid=1", "--environment=A=1;B", NULL };

	CHECK_INT(parse(&o, ok), 0);
	options_free(&o);
	CHECK(parse(&o, bad) != 0);
}

TEST(forbidden_output_characters)
{
	CHECK_INT(output_forbidden_char("/data/prof_1"), 0);
	CHECK_INT(output_forbidden_char("/data/a$b"), '$');
	CHECK_INT(output_forbidden_char("/data/a\tb"), '\t');
	CHECK_INT(output_forbidden_char("/d/`x`"), '`');
	CHECK_INT(output_forbidden_char("/d/x\x7f"), 0x7f);
}

TEST(short_options_are_refused_not_taken_for_an_application)
{
	struct options o;
	char *short_opt[] = { "dynprof", "-p", "123", NULL };
	char *after_dashes[] = { "dynprof", "--dynamic=on", "--", "-odd-name", NULL };
	char *help[] = { "dynprof", "-h", NULL };

	CHECK(parse(&o, short_opt) != 0);
	CHECK_INT(parse(&o, after_dashes), 0);
	CHECK_STR(o.app_argv[0], "-odd-name");
	options_free(&o);
	CHECK_INT(parse(&o, help), 0);
	CHECK(o.help);
	options_free(&o);
}

TEST(follow_and_its_filters_go_with_pid_auto)
{
	struct options o;
	char *follow[] = { "dynprof",          "--pid=auto",      "--follow",
			   "--container=abcd", "--container=web", "--user=0",
			   "--user=alice",     "--exe=python*",   NULL };
	char *no_auto[] = { "dynprof", "--pid=12", "--follow", NULL };
	char *alone[] = { "dynprof", "--follow", NULL };
	char *user_list[] = { "dynprof", "--list", "--user=0", NULL };
	char *exe_pid[] = { "dynprof", "--pid=1", "--exe=x", NULL };
	char *two_for_nspid[] = { "dynprof", "--pid=1", "--container=abcd", "--container=web", NULL };
	char *bad_user[] = { "dynprof", "--pid=auto", "--user=a:b", NULL };

	CHECK_INT(parse(&o, follow), 0);
	CHECK(o.follow);
	CHECK_INT(o.ncontainers, 2);
	CHECK_STR(o.containers[1], "web");
	CHECK_INT(o.nusers, 2);
	CHECK_INT(o.nexes, 1);
	options_free(&o);
	CHECK(parse(&o, no_auto) != 0);
	CHECK(parse(&o, alone) != 0);
	CHECK(parse(&o, user_list) != 0);
	CHECK(parse(&o, exe_pid) != 0);
	CHECK(parse(&o, two_for_nspid) != 0);
	CHECK(parse(&o, bad_user) != 0);
}

TEST(pid_given_twice_is_refused)
{
	struct options o;
	char *twice[] = { "dynprof", "--pid=1", "--pid=2", NULL };
	char *output_twice[] = { "dynprof", "--pid=1", "--output=/a", "--output=/b", NULL };

	CHECK(parse(&o, twice) != 0);
	CHECK(parse(&o, output_twice) != 0);
}

TEST(pid_values_out_of_range_are_not_called_non_numeric)
{
	int pid = -1;

	CHECK_INT(options_pid_value("42", 2, &pid), 0);
	CHECK_INT(pid, 42);
	CHECK(options_pid_value("0", 1, &pid) != 0);
	CHECK(options_pid_value("-5", 2, &pid) != 0);
	CHECK(options_pid_value("1000000000", 10, &pid) != 0);
	CHECK(options_pid_value("x", 1, &pid) != 0);
	CHECK_INT(pid, 42);
}

TEST(slurm_job_takes_a_job_id_and_implies_dynamic)
{
	struct options o;
	char *ok[] = { "dynprof", "--slurm-job=4242", "--hccl=on", NULL };
	char *array[] = { "dynprof", "--slurm-job=4242_7", NULL };
	char *bad[] = { "dynprof", "--slurm-job=12x", NULL };
	char *empty_elem[] = { "dynprof", "--slurm-job=12_", NULL };
	char *with_pid[] = { "dynprof", "--slurm-job=1", "--pid=3", NULL };
	char *with_app[] = { "dynprof", "--slurm-job=1", "./run.sh", NULL };
	char *with_control[] = { "dynprof", "--slurm-job=1", "--control=unix:/x", NULL };
	char *both[] = { "dynprof", "--slurm-job=1", "--nodes=a", NULL };

	CHECK_INT(parse(&o, ok), 0);
	CHECK_STR(o.slurm_job, "4242");
	CHECK_INT(o.dynamic, 1);
	CHECK_INT(o.sync_margin_ms, OPTIONS_DEFAULT_SYNC_MARGIN_MS);
	CHECK_INT(o.argc, 3);
	CHECK(o.argv == ok);
	options_free(&o);
	CHECK_INT(parse(&o, array), 0);
	options_free(&o);
	CHECK(parse(&o, bad) != 0);
	CHECK(parse(&o, empty_elem) != 0);
	CHECK(parse(&o, with_pid) != 0);
	CHECK(parse(&o, with_app) != 0);
	CHECK(parse(&o, with_control) != 0);
	CHECK(parse(&o, both) != 0);
}

TEST(nodes_and_launcher)
{
	struct options o;
	char *ok[] = { "dynprof", "--nodes=n1,gpu-2.rack_3", "--launcher=pdsh -w {node}",
		       "--sync-margin=0", NULL };
	char *bad_name[] = { "dynprof", "--nodes=n1,,n2", NULL };
	char *dot_name[] = { "dynprof", "--nodes=..", NULL };
	char *slash[] = { "dynprof", "--nodes=a/b", NULL };
	char *no_placeholder[] = { "dynprof", "--nodes=a", "--launcher=ssh", NULL };
	char *launcher_alone[] = { "dynprof", "--pid=1", "--launcher=ssh {node}", NULL };
	char *node_copy[] = { "dynprof", "--node-copy=-", "--pid=auto", NULL };
	char *node_copy_bad[] = { "dynprof", "--node-copy=../x", "--pid=auto", NULL };

	CHECK_INT(parse(&o, ok), 0);
	CHECK_STR(o.nodes, "n1,gpu-2.rack_3");
	CHECK_INT(o.sync_margin_ms, 0);
	options_free(&o);
	CHECK(parse(&o, bad_name) != 0);
	CHECK(parse(&o, dot_name) != 0);
	CHECK(parse(&o, slash) != 0);
	CHECK(parse(&o, no_placeholder) != 0);
	CHECK(parse(&o, launcher_alone) != 0);
	CHECK_INT(parse(&o, node_copy), 0);
	CHECK_STR(o.node_copy, "-");
	options_free(&o);
	CHECK(parse(&o, node_copy_bad) != 0);
}

UNIT_MAIN()
