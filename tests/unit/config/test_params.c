// SPDX-License-Identifier: MIT
/*
 * The params dynprof sends (config/params.h): msprof's 134 keys and types,
 * what each switch derives, the v1 keys and dataTypeConfig, the chips' PMU
 * lists, the values CANN's parser cannot carry and the size limit.
 */
#include <cjson/cJSON.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "config/chip.h"
#include "config/options.h"
#include "config/params.h"
#include "config/pmu.h"
#include "shared/msprof_params.h"
#include "unit.h"

static int parse(struct options *o, char **argv)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	return options_parse(argc, argv, o);
}

/* The JSON text of `gen` for --pid=1 plus the switches in sw (NULL-ended). */
static char *build_text(enum proto_version gen, int chip, const char *dir, char **sw)
{
	char *argv[40] = { "dynprof", "--pid=1" };
	struct options o;
	char *json;
	int n = 2;

	while (*sw && n < 39)
		argv[n++] = *sw++;
	argv[n] = NULL;
	if (parse(&o, argv))
		return NULL;
	json = params_build(&o, gen, dir, chip < 0 ? NULL : chip_by_id(chip));
	options_free(&o);
	return json;
}

static cJSON *build(enum proto_version gen, int chip, char **sw)
{
	char *json = build_text(gen, chip, "/data/out", sw);
	cJSON *root = json ? cJSON_Parse(json) : NULL;

	free(json);
	return root;
}

static const char *str(const cJSON *root, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);

	return cJSON_IsString(v) ? v->valuestring : "<not a string>";
}

static double num(const cJSON *root, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);

	return cJSON_IsNumber(v) ? v->valuedouble : -12345;
}

static bool has(const cJSON *root, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(root, key) != NULL;
}

#define SW(...) ((char *[]){ __VA_ARGS__, NULL })

/* ---- the defaults table ------------------------------------------------------ */

TEST(v2_table_has_msprofs_134_keys_once_with_their_types)
{
	size_t strs = 0, ints = 0, bools = 0;

	CHECK_INT((int)mp_v2_nkeys, 134);
	for (size_t i = 0; i < mp_v2_nkeys; i++) {
		strs += mp_v2_keys[i].type == MP_STR;
		ints += mp_v2_keys[i].type == MP_INT;
		bools += mp_v2_keys[i].type == MP_BOOL;
		for (size_t j = 0; j < i; j++)
			CHECK(strcmp(mp_v2_keys[i].key, mp_v2_keys[j].key) != 0);
	}
	CHECK_INT((int)ints, 26);
	CHECK_INT((int)bools, 2);
	CHECK_INT((int)strs, 106);
}

TEST(v2_defaults_spot_checked_against_section_4_3)
{
	cJSON *r = build(PROTO_V2, -1, SW(NULL));

	REQUIRE(r);
	CHECK_INT(cJSON_GetArraySize(r), 134);
	CHECK_STR(str(r, "acl"), "on");
	CHECK_STR(str(r, "taskTime"), "on");
	CHECK_STR(str(r, "taskTrace"), "on");
	CHECK_STR(str(r, "ts_keypoint"), "on");
	CHECK_STR(str(r, "prof_level"), "off");
	CHECK_STR(str(r, "runtimeApi"), "off");
	CHECK_STR(str(r, "geApi"), "off");
	CHECK_STR(str(r, "aicScale"), "all");
	CHECK_STR(str(r, "ai_core_profiling_mode"), "task-based");
	CHECK_STR(str(r, "storageLimit"), "");
	CHECK_STR(str(r, "hostSysUsage"), "");
	CHECK_STR(str(r, "result_dir"), "/data/out");
	CHECK(num(r, "hardware_mem_sampling_interval") == 20000);
	CHECK(num(r, "sysLpFreq") == 10000);
	CHECK(num(r, "profiling_period") == -1);
	CHECK(num(r, "host_sys_pid") == -1);
	CHECK(num(r, "hostProfilingSamplingInterval") == 20);
	CHECK(num(r, "host_disk_freq") == 50);
	CHECK(num(r, "msprofBinPid") == getpid());
	CHECK(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(r, "isCancel")));
	CHECK(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(r, "hostProfiling")));
	CHECK(!has(r, "exportType") && !has(r, "modelExecution"));
	cJSON_Delete(r);
}

TEST(v2_every_int_field_is_a_json_number_and_every_other_a_string)
{
	cJSON *r = build(PROTO_V2, CHIP_V4_1_0, SW("--host-sys-usage-freq=50", "--aic-freq=20"));
	const cJSON *v;

	REQUIRE(r);
	cJSON_ArrayForEach(v, r)
	{
		const struct mp_key *k = mp_find(mp_v2_keys, mp_v2_nkeys, v->string, strlen(v->string));

		REQUIRE(k);
		if (k->type == MP_INT)
			CHECK(cJSON_IsNumber(v));
		else if (k->type == MP_BOOL)
			CHECK(cJSON_IsBool(v));
		else
			CHECK(cJSON_IsString(v));
	}
	cJSON_Delete(r);
}

/* ---- switches ------------------------------------------------------------------ */

TEST(task_time_level_goes_raw_to_prof_level_with_hwts_logs)
{
	cJSON *r = build(PROTO_V2, CHIP_DC, SW("--task-time=l1"));

	REQUIRE(r);
	CHECK_STR(str(r, "taskTime"), "l1");
	CHECK_STR(str(r, "prof_level"), "l1");
	CHECK_STR(str(r, "hwts_log"), "on");
	CHECK_STR(str(r, "hwts_log1"), "on");
	CHECK_STR(str(r, "stars_acsq_task"), "");
	CHECK_STR(str(r, "ts_memcpy"), "on");
	cJSON_Delete(r);
}

TEST(task_time_on_stars_chip_sets_stars_acsq_task_not_hwts)
{
	cJSON *r = build(PROTO_V2, CHIP_V4_1_0, SW("--task-time=on"));

	REQUIRE(r);
	CHECK_STR(str(r, "prof_level"), "on");
	CHECK_STR(str(r, "stars_acsq_task"), "on");
	CHECK_STR(str(r, "hwts_log"), "");
	cJSON_Delete(r);
}

TEST(task_time_off_sets_only_task_time)
{
	cJSON *r = build(PROTO_V2, CHIP_DC, SW("--task-time=off"));

	REQUIRE(r);
	CHECK_STR(str(r, "taskTime"), "off");
	CHECK_STR(str(r, "prof_level"), "off");
	CHECK_STR(str(r, "hwts_log"), "");
	CHECK_STR(str(r, "ts_memcpy"), "");
	cJSON_Delete(r);
}

TEST(host_sys_list_turns_each_item_on_but_keeps_dynprofs_own)
{
	cJSON *r = build(PROTO_V2, -1, SW("--host-sys=cpu,disk,osrt,numa"));

	REQUIRE(r);
	CHECK_STR(str(r, "host_sys"), "numa");
	CHECK_STR(str(r, "host_cpu_profiling"), "off");
	CHECK_STR(str(r, "host_osrt_profiling"), "off");
	CHECK_STR(str(r, "host_disk_profiling"), "off"); /* dynprof's own */
	CHECK_STR(str(r, "host_numa_profiling"), "on");
	CHECK_STR(str(r, "host_mem_profiling"), "off");
	CHECK_STR(str(r, "host_network_profiling"), "off");
	CHECK(num(r, "host_disk_freq") == 50);
	CHECK(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(r, "hostProfiling")));
	cJSON_Delete(r);
}

TEST(host_sys_of_only_dynprofs_items_sends_none)
{
	cJSON *r = build(PROTO_V2, -1, SW("--host-sys=osrt,cpu,mem,disk,network"));

	REQUIRE(r);
	CHECK_STR(str(r, "host_sys"), "");
	CHECK_STR(str(r, "host_osrt_profiling"), "off");
	CHECK_STR(str(r, "host_mem_profiling"), "off");
	CHECK_STR(str(r, "host_disk_profiling"), "off");
	CHECK_STR(str(r, "host_network_profiling"), "off");
	cJSON_Delete(r);
}

TEST(host_sys_usage_sets_all_pid_keys_and_freq_an_interval_number)
{
	cJSON *r = build(PROTO_V2, -1, SW("--host-sys-usage=mem", "--host-sys-usage-freq=3"));

	REQUIRE(r);
	CHECK_STR(str(r, "hostSysUsage"), "mem");
	CHECK_STR(str(r, "hostAllPidMemProfiling"), "on");
	CHECK_STR(str(r, "hostAllPidCpuProfiling"), "off");
	CHECK(num(r, "hostProfilingSamplingInterval") == 333);
	cJSON_Delete(r);
}

TEST(aic_mode_and_freq_set_both_ai_core_and_vector)
{
	cJSON *r = build(PROTO_V2, CHIP_DC, SW("--aic-mode=sample-based", "--aic-freq=20"));

	REQUIRE(r);
	CHECK_STR(str(r, "ai_core_profiling_mode"), "sample-based");
	CHECK_STR(str(r, "aiv_profiling_mode"), "sample-based");
	CHECK_STR(str(r, "ai_core_lpm"), "off");
	CHECK(num(r, "aicore_sampling_interval") == 50);
	CHECK(num(r, "aiv_sampling_interval") == 50);
	cJSON_Delete(r);
}

TEST(aic_metrics_sets_both_metrics_and_their_events)
{
	cJSON *r = build(PROTO_V2, CHIP_DC, SW("--aic-metrics=Memory"));

	REQUIRE(r);
	CHECK_STR(str(r, "ai_core_metrics"), "Memory");
	CHECK_STR(str(r, "aiv_metrics"), "Memory");
	CHECK_STR(str(r, "ai_core_profiling_events"), "0x15,0x16,0x31,0x32,0xf,0x10,0x12,0x13");
	CHECK_STR(str(r, "aiv_profiling_events"), "0x15,0x16,0x31,0x32,0xf,0x10,0x12,0x13");
	cJSON_Delete(r);
}

TEST(custom_metric_passes_its_list_lower_cased)
{
	cJSON *r = build(PROTO_V2, CHIP_DC, SW("--aic-metrics=Custom:0x1A,0xBc"));

	REQUIRE(r);
	CHECK_STR(str(r, "ai_core_metrics"), "Custom:0x1a,0xbc");
	CHECK_STR(str(r, "ai_core_profiling_events"), "0x1a,0xbc");
	cJSON_Delete(r);
}

TEST(ai_core_off_leaves_aiv_profiling_empty_and_lpm_off)
{
	cJSON *r = build(PROTO_V2, CHIP_DC, SW("--ai-core=off"));

	REQUIRE(r);
	CHECK_STR(str(r, "ai_core_profiling"), "off");
	CHECK_STR(str(r, "aiv_profiling"), "");
	CHECK_STR(str(r, "ai_core_lpm"), "off");
	CHECK_STR(str(r, "ai_core_metrics"), "PipeUtilization");
	cJSON_Delete(r);
}

TEST(direct_switches_reach_their_keys)
{
	cJSON *r = build(PROTO_V2, -1,
			 SW("--ascendcl=off", "--runtime-api=on", "--aicpu=on", "--hccl=on",
			    "--msproftx=on", "--mstx-domain-include=a", "--ge-api=l1",
			    "--task-memory=on", "--task-tsfw=on", "--storage-limit=300MB",
			    "--environment=A=1;B=2", "--sys-profiling=on", "--sys-sampling-freq=5",
			    "--host-sys-pid=77", "--model-execution=on", "--type=db"));

	REQUIRE(r);
	CHECK_STR(str(r, "acl"), "off");
	CHECK_STR(str(r, "runtimeApi"), "on");
	CHECK_STR(str(r, "aicpuTrace"), "on");
	CHECK_STR(str(r, "hcclTrace"), "on");
	CHECK_STR(str(r, "msproftx"), "on");
	CHECK_STR(str(r, "mstxDomainInclude"), "a");
	CHECK_STR(str(r, "geApi"), "l1");
	CHECK_STR(str(r, "taskMemory"), "on");
	CHECK_STR(str(r, "taskTsfw"), "on");
	CHECK_STR(str(r, "storageLimit"), "300MB");
	CHECK_STR(str(r, "app_env"), "A=1;B=2");
	CHECK_STR(str(r, "sys_profiling"), "on");
	CHECK(num(r, "sys_sampling_interval") == 200);
	CHECK(num(r, "host_sys_pid") == 77);
	CHECK_INT(cJSON_GetArraySize(r), 134); /* --model-execution, --type: no key */
	cJSON_Delete(r);
}

/* ---- chips and PMU lists ------------------------------------------------------------ */

TEST(chip_v4_1_0_renames_the_ai_core_pipe_utilization_only)
{
	cJSON *r = build(PROTO_V2, CHIP_V4_1_0, SW(NULL));

	REQUIRE(r);
	CHECK_STR(str(r, "ai_core_metrics"), "PipeUtilizationExct");
	CHECK_STR(str(r, "ai_core_profiling_events"), "0x416,0x417,0x9,0x302,0xc,0x303,0x54,0x55");
	CHECK_STR(str(r, "aiv_metrics"), "PipeUtilization");
	CHECK_STR(str(r, "aiv_profiling_events"), "0x8,0xa,0x9,0xb,0xc,0xd,0x54,0x55");
	cJSON_Delete(r);
}

TEST(mini_v3_defaults_to_pipeline_execute_utilization_and_own_memory_ub)
{
	cJSON *r = build(PROTO_V2, CHIP_MINI_V3, SW(NULL));
	cJSON *ub = build(PROTO_V2, CHIP_MINI_V3, SW("--aic-metrics=MemoryUB"));

	REQUIRE(r && ub);
	CHECK_STR(str(r, "ai_core_metrics"), "PipelineExecuteUtilization");
	CHECK_STR(str(r, "ai_core_profiling_events"), "0x12c,0x49,0x4a,0x9,0x302,0xc,0xd,0x303");
	CHECK_STR(str(ub, "ai_core_profiling_events"), "0x37,0x38,0x1a5,0x1a6,0x17f,0x180,0x191");
	cJSON_Delete(r);
	cJSON_Delete(ub);
}

TEST(david_chips_have_their_own_lists)
{
	cJSON *r = build(PROTO_V2, CHIP_CLOUD_V3, SW("--aic-metrics=ArithmeticUtilization"));

	REQUIRE(r);
	CHECK_STR(str(r, "ai_core_profiling_events"), "0x323,0x324");
	CHECK_STR(pmu_metric_events(chip_by_id(CHIP_CLOUD_V4), "PipeUtilization"),
		  "0x501,0x301,0x1,0x701,0x202,0x203,0x34,0x35,0x714");
	CHECK_STR(pmu_metric_events(chip_by_id(CHIP_CLOUD_V3), "PipeUtilizationExct"), "");
	cJSON_Delete(r);
}

TEST(l2_event_list_per_chip_and_npu_events_on_soc_pmu_chips)
{
	cJSON *cloud = build(PROTO_V2, CHIP_CLOUD, SW("--l2=on"));
	cJSON *dc = build(PROTO_V2, CHIP_DC, SW("--l2=on"));
	cJSON *v4 = build(PROTO_V2, CHIP_V4_1_0, SW("--l2=on"));
	cJSON *v3 = build(PROTO_V2, CHIP_CLOUD_V3, SW("--l2=on"));
	cJSON *unknown = build(PROTO_V2, -1, SW("--l2=on"));

	REQUIRE(cloud && dc && v4 && v3 && unknown);
	CHECK_STR(str(cloud, "l2CacheTaskProfiling"), "on");
	CHECK_STR(str(cloud, "l2CacheTaskProfilingEvents"), "0x5b,0x59,0x5c,0x7d,0x7e,0x71,0x79,0x7c");
	CHECK_STR(str(dc, "l2CacheTaskProfilingEvents"), "0x78,0x79,0x77,0x71,0x6a,0x6c,0x74,0x62");
	CHECK_STR(str(dc, "npuEvents"), "");
	CHECK_STR(str(v4, "l2CacheTaskProfilingEvents"), "0xF6,0xFB,0xFC,0xBF,0x90,0x91,0x9C,0x9D");
	CHECK_STR(str(v4, "npuEvents"),
		  "HA:0xF6,0xFB,0xFC,0xBF,0x90,0x91,0x9C,0x9D;SMMU:0x2,0x8a,0x8b,0x8c,0x8d");
	CHECK_STR(str(v3, "l2CacheTaskProfilingEvents"), "0x00,0x81,0x82,0x83,0x74,0x75");
	CHECK_STR(str(unknown, "l2CacheTaskProfiling"), "on");
	CHECK_STR(str(unknown, "l2CacheTaskProfilingEvents"), "");
	CHECK_STR(str(unknown, "ai_core_profiling_events"), "");
	cJSON_Delete(cloud);
	cJSON_Delete(dc);
	cJSON_Delete(v4);
	cJSON_Delete(v3);
	cJSON_Delete(unknown);
}

TEST(chip_named_by_number_name_or_alias)
{
	CHECK(chip_by_text("5") == chip_by_id(CHIP_V4_1_0));
	CHECK(chip_by_text("chip_v4_1_0") == chip_by_id(CHIP_V4_1_0));
	CHECK(chip_by_text("Ascend910B") == chip_by_id(CHIP_V4_1_0));
	CHECK(chip_by_text("3") == NULL);
	CHECK(chip_by_text("999") == NULL);
	CHECK(chip_by_text("910") == NULL);
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	REQUIRE(fd >= 0);
	REQUIRE(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	REQUIRE(chmod(path, mode) == 0);
}

/* dir/PROF_..._<stamp>_.../host/info.json holding json. */
static void prof_with_info(const char *dir, const char *stamp, const char *json)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/PROF_000001_%s_00000001AAAAAAAA", dir, stamp);
	REQUIRE(mkdir(p, 0755) == 0);
	strcat(p, "/host");
	REQUIRE(mkdir(p, 0755) == 0);
	strcat(p, "/info.json");
	write_file(p, json, 0644);
}

/* A test's temporary tree gone (mkdtemp's names: no quoting needed). */
static void remove_tree(const char *dir)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
}

TEST(chip_from_the_newest_prof_folders_info_json)
{
	char dir[] = "/tmp/dp-chip.XXXXXX", where[1024];
	int id = -1;

	REQUIRE(mkdtemp(dir));
	CHECK_INT(chip_from_prof_dirs(dir, &id, where, sizeof(where)), -ENOENT);
	prof_with_info(dir, "20260101000000000", "{\"pid\":\"1\",\"platform_version\":\"4\"}");
	prof_with_info(dir, "20260202000000000", "{\"platform_version\":5}");
	CHECK_INT(chip_from_prof_dirs(dir, &id, where, sizeof(where)), 0);
	CHECK_INT(id, 5);
	CHECK(strstr(where, "20260202") != NULL);
	/* A newer folder of dynprof's agent names the chip it was told: not evidence. */
	prof_with_info(dir, "20260303000000000", "{\"platform_version\":\"2\",\"cannVersion\":\"none\"}");
	CHECK_INT(chip_from_prof_dirs(dir, &id, where, sizeof(where)), 0);
	CHECK_INT(id, 5);
	CHECK(strstr(where, "20260202") != NULL);
	remove_tree(dir);
}

/* Thousands of other folders without an info.json: only the newest few are looked at. */
TEST(chip_look_is_bounded_to_the_newest_folders)
{
	char dir[] = "/tmp/dp-chip.XXXXXX", p[512], where[1024];
	int id = -1;

	REQUIRE(mkdtemp(dir));
	/* The oldest names the chip; 40 newer ones name none. */
	prof_with_info(dir, "20250101000000000", "{\"platform_version\":5}");
	CHECK_INT(chip_from_prof_dirs(dir, &id, where, sizeof(where)), 0);
	for (int i = 0; i < 40; i++) {
		snprintf(p, sizeof(p), "%s/PROF_000001_202602%02d000000000_00000001AAAAAAAA", dir, i + 1);
		REQUIRE(mkdir(p, 0755) == 0);
	}
	CHECK_INT(chip_from_prof_dirs(dir, &id, where, sizeof(where)), -ENOENT);
	CHECK(strstr(where, "41 PROF_ folders") != NULL);
	CHECK(strstr(where, "none of the newest 32") != NULL);
	remove_tree(dir);
}

/* A driver tree as /etc/ascend_install.info describes it, with the stand-in library. */
static void make_driver_tree(const char *dir, mode_t lib_mode, char *info, size_t len)
{
	const char *build = getenv("DYNPROF_BUILD");
	char src[512], path[512], cmd[2048];

	snprintf(src, sizeof(src), "%s/tests/libascend_hal.so", build ? build : "build");
	snprintf(path, sizeof(path), "%s/driver/lib64/common", dir);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s && cp %s %s/libascend_hal.so", path, src, path);
	REQUIRE(system(cmd) == 0);
	strcat(path, "/libascend_hal.so");
	REQUIRE(chmod(path, lib_mode) == 0);
	snprintf(info, len, "%s/ascend_install.info", dir);
	snprintf(cmd, sizeof(cmd), "UserName=x\nDriver_Install_Path_Param=%s\nother=1\n", dir);
	write_file(info, cmd, 0644);
}

TEST(chip_from_the_driver_bits_8_to_15)
{
	char dir[] = "/tmp/dp-hal.XXXXXX", info[600], why[600];
	int id = -1;

	REQUIRE(mkdtemp(dir));
	make_driver_tree(dir, 0755, info, sizeof(info));
	CHECK_INT(chip_from_driver(info, &id, why, sizeof(why)), 0);
	CHECK_INT(id, 5);
	remove_tree(dir);
}

TEST(driver_library_writable_by_others_is_not_loaded)
{
	char dir[] = "/tmp/dp-hal.XXXXXX", info[600], why[600];
	int id = -1;

	REQUIRE(mkdtemp(dir));
	make_driver_tree(dir, 0757, info, sizeof(info));
	CHECK_INT(chip_from_driver(info, &id, why, sizeof(why)), -EPERM);
	CHECK_INT(id, -1);
	CHECK_INT(chip_from_driver("/nonexistent/ascend_install.info", &id, why, sizeof(why)), -ENOENT);
	remove_tree(dir);
}

/* ---- v1 ------------------------------------------------------------------------------- */

/* dataTypeConfig read from the text: a double cannot hold every uint64. */
static uint64_t v1_bits(int chip, char **sw)
{
	char *json = build_text(PROTO_V1, chip, "/data/out", sw);
	const char *p = json ? strstr(json, "\"dataTypeConfig\":") : NULL;
	uint64_t v = p ? strtoull(p + strlen("\"dataTypeConfig\":"), NULL, 10) : 0;

	free(json);
	return v;
}

#define V1_DEFAULT 0xC0000000A4000847ULL

TEST(v1_default_data_type_config_is_msprofs_exact_uint64)
{
	char *json = build_text(PROTO_V1, CHIP_V4_1_0, "/data/out", SW(NULL));

	REQUIRE(json);
	CHECK(strstr(json, "\"dataTypeConfig\":13835058058033629255") != NULL);
	free(json);
	CHECK(v1_bits(-1, SW(NULL)) == V1_DEFAULT);
}

TEST(v1_each_switch_sets_its_bit)
{
	CHECK(v1_bits(5, SW("--runtime-api=on")) == (V1_DEFAULT | 0x100));
	CHECK(v1_bits(5, SW("--aicpu=on")) == (V1_DEFAULT | 0x8));
	CHECK(v1_bits(5, SW("--hccl=on")) == (V1_DEFAULT | 0x20));
	CHECK(v1_bits(5, SW("--l2=on")) == (V1_DEFAULT | 0x10));
	CHECK(v1_bits(5, SW("--task-memory=on")) == (V1_DEFAULT | 0x1000));
	CHECK(v1_bits(5, SW("--ge-api=l0")) == (V1_DEFAULT | 0x200));
	CHECK(v1_bits(5, SW("--ge-api=l1")) == (V1_DEFAULT | 0x200 | 0x1000000));
	CHECK(v1_bits(5, SW("--model-execution=on")) == (V1_DEFAULT | 0x200 | 0x1000000));
	CHECK(v1_bits(5, SW("--ascendcl=off")) == (V1_DEFAULT & ~0x1ULL));
	CHECK(v1_bits(5, SW("--aic-mode=sample-based")) == (V1_DEFAULT & ~0x20000004ULL));
	CHECK(v1_bits(5, SW("--ai-core=off")) == (V1_DEFAULT & ~0x20000004ULL));
	/* l0: level 0 only, and the AI core metrics default off. */
	CHECK(v1_bits(5, SW("--task-time=l0")) == (V1_DEFAULT & ~0x20000006ULL));
	CHECK(v1_bits(5, SW("--task-time=l0", "--ai-core=on")) == (V1_DEFAULT & ~0x2ULL));
	CHECK(v1_bits(5, SW("--task-time=off")) == 0x1);
	CHECK(v1_bits(CHIP_CLOUD, SW(NULL)) == (V1_DEFAULT & ~0x20000000ULL));
}

TEST(v1_sends_v1_key_names_and_strict_types)
{
	cJSON *r = build(PROTO_V1, CHIP_V4_1_0,
			 SW("--ge-api=l1", "--host-sys=cpu,disk,numa", "--host-sys-usage=cpu",
			    "--host-sys-usage-freq=10"));

	REQUIRE(r);
	CHECK_STR(str(r, "ge_api"), "l1");
	CHECK_STR(str(r, "profLevel"), "l1");
	CHECK_STR(str(r, "host_sys"), "on");
	CHECK_STR(str(r, "host_one_pid_cpu_profiling"), "off"); /* dynprof's own */
	CHECK_STR(str(r, "host_disk_profiling"), "off");
	CHECK_STR(str(r, "host_one_pid_mem_profiling"), "off");
	CHECK_STR(str(r, "host_sys_usage"), "on");
	CHECK_STR(str(r, "host_sys_cpu_profiling"), "on");
	CHECK_STR(str(r, "host_all_pid_cpu_profiling"), "on");
	CHECK(num(r, "host_cpu_profiling_sampling_interval") == 100);
	CHECK_STR(str(r, "ai_core_metrics"), "PipeUtilizationExct");
	CHECK_STR(str(r, "aiv_metrics"), "PipeUtilization");
	CHECK_STR(str(r, "stars_acsq_task"), "on");
	CHECK(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(r, "is_cancel")));
	CHECK(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(r, "host_profiling")));
	CHECK(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(r, "dataTypeConfig")));
	CHECK(!has(r, "acl") && !has(r, "taskTime") && !has(r, "runtimeApi") && !has(r, "isCancel"));
	cJSON_Delete(r);
}

/* ---- refusals ------------------------------------------------------------------------ */

TEST(aiv_switches_refused_except_on_nano)
{
	struct options o;

	CHECK(parse(&o, SW("dynprof", "--pid=1", "--ai-vector-core=on")) != 0);
	CHECK(parse(&o, SW("dynprof", "--pid=1", "--aiv-metrics=Memory")) != 0);
	CHECK(parse(&o, SW("dynprof", "--pid=1", "--aiv-freq=10", "--chip=CHIP_V4_1_0")) != 0);
	CHECK_INT(parse(&o, SW("dynprof", "--pid=1", "--aiv-mode=sample-based", "--chip=9")), 0);
	options_free(&o);
}

TEST(switches_dynamic_mode_refuses_and_unsupported_ones)
{
	struct options o;

	CHECK(parse(&o, SW("dynprof", "--pid=1", "--sys-devices=0")) != 0);
	CHECK(parse(&o, SW("dynprof", "--pid=1", "--sys-period=10")) != 0);
	CHECK(parse(&o, SW("dynprof", "--pid=1", "--sys-cpu-profiling=on")) != 0);
	CHECK(parse(&o, SW("dynprof", "--pid=1", "--sys-hardware-mem=on")) != 0);
	CHECK(parse(&o, SW("dynprof", "--pid=1", "--mstx-domain-include=a")) != 0);
	CHECK(parse(&o, SW("dynprof", "--pid=1", "--msproftx=on", "--mstx-domain-include=a",
			   "--mstx-domain-exclude=b")) != 0);
	CHECK(parse(&o, SW("dynprof", "--pid=1", "--aic-metrics=Bogus")) != 0);
	CHECK(parse(&o, SW("dynprof", "--pid=1", "--aic-metrics=Custom:12")) != 0);
	CHECK(parse(&o, SW("dynprof", "--pid=1", "--chip=Bogus")) != 0);
	CHECK(parse(&o, SW("dynprof", "--pid=1", "--aic-freq=0")) != 0);
	CHECK_INT(parse(&o, SW("dynprof", "--dry-run")), 0);
	CHECK(o.dry_run);
	options_free(&o);
}

TEST(values_nanojson_cannot_carry_are_refused)
{
	struct options o;

	CHECK(parse(&o, SW("dynprof", "--pid=1", "--environment=A=\"x\"")) != 0);
	CHECK(parse(&o, SW("dynprof", "--pid=1", "--environment=A=c:\\x")) != 0);
	CHECK(parse(&o, SW("dynprof", "--pid=1", "--mstx-domain-include=a\tb", "--msproftx=on")) != 0);
	/* A result folder the target names (its home) is checked when the JSON is built. */
	CHECK(build_text(PROTO_V2, -1, "/home/a\"b", SW(NULL)) == NULL);
	CHECK(build_text(PROTO_V2, -1, "/home/a\\b", SW(NULL)) == NULL);
}

TEST(v1_escapes_what_its_parser_decodes)
{
	cJSON *r;
	char *json = build_text(PROTO_V1, -1, "/home/a\"b\\c", SW(NULL));

	REQUIRE(json);
	r = cJSON_Parse(json);
	REQUIRE(r);
	CHECK_STR(str(r, "result_dir"), "/home/a\"b\\c");
	cJSON_Delete(r);
	free(json);
}

TEST(params_past_the_protocol_limit_are_refused)
{
	char dir[4096];
	char *json;

	memset(dir, 'd', sizeof(dir));
	dir[0] = '/';
	dir[1150] = '\0';
	json = build_text(PROTO_V2, CHIP_V4_1_0, dir, SW(NULL));
	REQUIRE(json);
	CHECK(strlen(json) < 4096);
	free(json);
	dir[1150] = 'd';
	dir[1300] = '\0';
	CHECK(build_text(PROTO_V2, CHIP_V4_1_0, dir, SW(NULL)) == NULL);
}

UNIT_MAIN()
