// SPDX-License-Identifier: MIT
/*
 * The agent's params (agent/params.h): parsed as CANN's two parsers parse
 * them and kept as CANN keeps them. The agent's sources are compiled into
 * this test: unit tests link the tool's objects, not the agent's.
 */
#include <stdlib.h>

#include "../../user/agent/params_json.c"
#include "../../user/agent/params.c"
#include "config/options.h"
#include "config/params.h"
#include "unit.h"

/* The kept value of `key`, from the effective JSON. */
static const char *kept_value(const char *key, char *buf, size_t len)
{
	char *json = agent_params_effective_json(), pat[128], *p, *end;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	buf[0] = '\0';
	p = json ? strstr(json, pat) : NULL;
	if (p) {
		p += strlen(pat);
		end = p + strcspn(p + 1, ",}") + 1;
		snprintf(buf, len, "%.*s", (int)(end - p), p);
	}
	free(json);
	return buf;
}

#define KEPT(key) kept_value(key, (char[4096]){ 0 }, 4096)

TEST(v2_overlay_keeps_absent_keys_from_earlier_starts)
{
	agent_params_reset();
	CHECK_INT(agent_params_apply(PROTO_V2, "{\"runtimeApi\":\"on\",\"result_dir\":\"/a\"}"), 0);
	CHECK_INT(agent_params_apply(PROTO_V2, "{\"result_dir\":\"/b\"}"), 0);
	CHECK_STR(KEPT("runtimeApi"), "\"on\"");
	CHECK_STR(KEPT("result_dir"), "\"/b\"");
}

TEST(v2_wrong_type_or_null_clears_the_field)
{
	agent_params_reset();
	CHECK_INT(agent_params_apply(PROTO_V2,
				     "{\"runtimeApi\":\"on\",\"hostProfilingSamplingInterval\":50}"),
		  0);
	CHECK_INT(agent_params_apply(PROTO_V2,
				     "{\"runtimeApi\":1,\"hostProfilingSamplingInterval\":\"20\"}"),
		  0);
	CHECK_STR(KEPT("runtimeApi"), "\"\"");
	CHECK_STR(KEPT("hostProfilingSamplingInterval"), "0");
	CHECK_INT(agent_params_apply(PROTO_V2, "{\"acl\":\"on\",\"aicore_sampling_interval\":2.5}"), 0);
	CHECK_INT(agent_params_apply(PROTO_V2, "{\"acl\":null}"), 0);
	CHECK_STR(KEPT("acl"), "\"\"");
	CHECK_STR(KEPT("aicore_sampling_interval"), "0");
}

TEST(v2_strings_end_at_the_next_quote_and_keep_escapes_as_written)
{
	agent_params_reset();
	CHECK_INT(agent_params_apply(PROTO_V2, "{\"result_dir\":\"  /a\\\\b\\n\"}"), 0);
	/* The kept text is /a\\b\n (5 bytes + 2): the file escapes it again. */
	CHECK_STR(KEPT("result_dir"), "\"/a\\\\\\\\b\\\\n\"");
	CHECK_INT(agent_params_apply(PROTO_V2, "{\"app_env\":\"A=\\\"x\\\"\"}"), -EINVAL);
}

TEST(v2_a_bad_number_anywhere_fails_and_changes_nothing)
{
	agent_params_reset();
	CHECK_INT(agent_params_apply(PROTO_V2, "{\"acl\":\"on\"}"), 0);
	CHECK_INT(agent_params_apply(PROTO_V2, "{\"acl\":\"off\",\"unknown\":4294967295}"), -EINVAL);
	CHECK_INT(agent_params_apply(PROTO_V2, "{\"acl\":\"off\",\"x\":007}"), -EINVAL);
	CHECK_INT(agent_params_apply(PROTO_V2, "{\"acl\":\"off\",\"x\":1.}"), -EINVAL);
	CHECK_INT(agent_params_apply(PROTO_V2, "{\"acl\":\"off\",\"x\":tru}"), -EINVAL);
	CHECK_INT(agent_params_apply(PROTO_V2, "[\"acl\"]"), -EINVAL);
	CHECK_INT(agent_params_apply(PROTO_V2, "{\"acl\":\"off\""), -EINVAL);
	CHECK_STR(KEPT("acl"), "\"on\"");
}

TEST(v2_lenient_syntax_is_accepted)
{
	agent_params_reset();
	CHECK_INT(agent_params_apply(PROTO_V2,
				     "{\"acl\" \"on\" \"memInterval\" 1e3 \"x\":{\"y\":[1 2]}, \"isCancel\":nope,}junk"),
		  0);
	CHECK_STR(KEPT("acl"), "\"on\"");
	CHECK_STR(KEPT("memInterval"), "1");
	CHECK_STR(KEPT("isCancel"), "false");
}

TEST(v2_server_rewrites_persist)
{
	char pid[32];

	agent_params_reset();
	CHECK_INT(agent_params_apply(PROTO_V2,
				     "{\"prof_level\":\"off\",\"taskTime\":\"on\",\"taskTrace\":\"on\",\"host_sys_pid\":-1}"),
		  0);
	CHECK_STR(KEPT("prof_level"), "\"level1\"");
	CHECK_STR(KEPT("runtimeTrace"), "\"on\"");
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	CHECK_STR(KEPT("host_sys_pid"), pid);
	CHECK_INT(agent_params_apply(PROTO_V2, "{\"prof_level\":\"l0\"}"), 0);
	CHECK_STR(KEPT("prof_level"), "\"level0\"");
}

/* What dynprof sends (config/params.c), as the 9.x server would take it. */
static uint64_t server_bits_for(char **sw)
{
	char *argv[16] = { "dynprof", "--pid=1" };
	struct options o;
	char *json;
	int n = 2;
	uint64_t b = 0;

	while (*sw)
		argv[n++] = *sw++;
	argv[n] = NULL;
	if (options_parse(n, argv, &o))
		return 0;
	json = params_build(&o, PROTO_V2, "/tmp/x", chip_by_id(CHIP_V4_1_0));
	agent_params_reset();
	if (json && !agent_params_apply(PROTO_V2, json))
		b = agent_params_data_type_config();
	free(json);
	options_free(&o);
	return b;
}

TEST(v2_server_data_type_config_of_dynprof_defaults_is_msprofs)
{
	CHECK(server_bits_for((char *[]){ NULL }) == 0x4000000024000847ULL);
	CHECK(server_bits_for((char *[]){ "--runtime-api=on", NULL }) == 0x4000000024000947ULL);
	CHECK(server_bits_for((char *[]){ "--task-time=l0", NULL }) == 0x4000000024000845ULL);
	CHECK(server_bits_for((char *[]){ "--ge-api=l1", "--aicpu=on", "--hccl=on", "--l2=on",
					  "--task-memory=on", "--task-tsfw=on", NULL }) ==
	      (0x4000000024000847ULL | 0x200 | 0x1000000 | 0x8 | 0x20 | 0x10 | 0x1000 | 0x400));
	/* What dynprof sent before: result_dir only. */
	agent_params_reset();
	CHECK_INT(agent_params_apply(PROTO_V2,
				     "{\"result_dir\":\"/x\",\"taskTime\":\"on\",\"taskTrace\":\"on\",\"prof_level\":\"off\"}"),
		  0);
	CHECK(agent_params_data_type_config() == 0x4000000004000802ULL);
}

TEST(v2_storage_limit_below_200mb_fails_and_becomes_200mb)
{
	agent_params_reset();
	CHECK_INT(agent_params_apply(PROTO_V2, "{\"storageLimit\":\"300MB\"}"), 0);
	CHECK_INT(agent_params_apply(PROTO_V2, "{\"storageLimit\":\"100MB\"}"), -EINVAL);
	CHECK_STR(KEPT("storageLimit"), "\"200MB\"");
	CHECK_INT(agent_params_apply(PROTO_V2, "{\"acl\":\"on\"}"), 0);
	CHECK_INT(agent_params_apply(PROTO_V2, "{\"storageLimit\":\"3GB\"}"), -EINVAL);
}

TEST(v1_replaces_the_set_and_keeps_the_exact_uint64)
{
	agent_params_reset();
	CHECK_INT(agent_params_apply(PROTO_V1,
				     "{\"result_dir\":\"/a\",\"ge_api\":\"l1\",\"dataTypeConfig\":13835058058033629255}"),
		  0);
	CHECK(agent_params_data_type_config() == 0xC0000000A4000847ULL);
	CHECK_INT(agent_params_apply(PROTO_V1, "{\"result_dir\":\"/b\"}"), 0);
	CHECK_STR(KEPT("ge_api"), "\"\"");
	CHECK_STR(KEPT("aicore_sampling_interval"), "10");
	CHECK(agent_params_data_type_config() == 0);
}

TEST(v1_parser_is_strict_about_syntax_and_types)
{
	agent_params_reset();
	CHECK_INT(agent_params_apply(PROTO_V1, "{\"result_dir\":\"/a\\\"b\\u0041\"}"), 0);
	CHECK_STR(KEPT("result_dir"), "\"/a\\\"bA\"");
	CHECK_INT(agent_params_apply(PROTO_V1, "{\"result_dir\":1}"), -EINVAL);
	CHECK_INT(agent_params_apply(PROTO_V1, "{\"result_dir\":null}"), -EINVAL);
	CHECK_INT(agent_params_apply(PROTO_V1, "{\"aicore_sampling_interval\":\"10\"}"), -EINVAL);
	CHECK_INT(agent_params_apply(PROTO_V1, "{\"is_cancel\":0}"), -EINVAL);
	CHECK_INT(agent_params_apply(PROTO_V1, "{\"result_dir\":\"/a\",}"), -EINVAL);
	CHECK_INT(agent_params_apply(PROTO_V1, "{\"result_dir\":\"/a\"}x"), -EINVAL);
	CHECK_INT(agent_params_apply(PROTO_V1, "{\"result_dir\" \"/a\"}"), -EINVAL);
	CHECK_INT(agent_params_apply(PROTO_V1, "{\"is_cancel\":false,\"aicore_sampling_interval\":20.7}"),
		  0);
	CHECK_STR(KEPT("aicore_sampling_interval"), "20");
}

TEST(result_dir_default_when_empty_in_v2_only)
{
	char dir[256];

	agent_params_reset();
	CHECK_INT(agent_params_apply(PROTO_V1, "{}"), 0);
	CHECK_INT(agent_params_result_dir(dir, sizeof(dir)), -EINVAL);
	agent_params_reset();
	CHECK_INT(agent_params_apply(PROTO_V2, "{}"), 0);
	setenv("ASCEND_WORK_PATH", "/work/x", 1);
	CHECK_INT(agent_params_result_dir(dir, sizeof(dir)), 0);
	CHECK_STR(dir, "/work/x/profiling_data");
	unsetenv("ASCEND_WORK_PATH");
}

UNIT_MAIN()
