// SPDX-License-Identifier: MIT
/*
 * The v1 keys (CANN <= 8.3, MindStudio msprof) and the dataTypeConfig
 * msprof v1 computes from the switches (docs/PROTOCOL.md Part 2 section 6; bit
 * values of prof_acl_api.h). msprof gates each bit by the platform's
 * supportSwitch_; dynprof's gating is coarser, see docs/dynprof.8 "V1".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/hostsys.h"
#include "config/params.h"
#include "config/params_derive.h"

#define PROF_ACL_API 0x1ULL
#define PROF_TASK_TIME_L1 0x2ULL
#define PROF_AICORE_METRICS 0x4ULL
#define PROF_AICPU_TRACE 0x8ULL
#define PROF_L2CACHE 0x10ULL
#define PROF_HCCL_TRACE 0x20ULL
#define PROF_KEYPOINT_TRACE 0x40ULL
#define PROF_RUNTIME_API 0x100ULL
#define PROF_FWK_SCHEDULE_L0 0x200ULL
#define PROF_TASK_TIME_L0 0x800ULL
#define PROF_TASK_MEMORY 0x1000ULL
#define PROF_FWK_SCHEDULE_L1 0x1000000ULL
#define PROF_RUNTIME_TRACE 0x4000000ULL
#define PROF_AIV_METRICS 0x20000000ULL
#define PROF_OP_DETAIL 0x80000000ULL
#define PROF_KEYPOINT_TRACE_HELPER 0x4000000000000000ULL
#define PROF_MODEL_LOAD 0x8000000000000000ULL

/* v1 task time: on|l1 (and l2, l3, which v1 does not know) is level 1. */
static const char *v1_level(const struct options *o)
{
	const char *tt = params_sw(o, "task-time", "on");

	return !strcmp(tt, "off") ? "off" : !strcmp(tt, "l0") ? "l0" : "l1";
}

/* v1: AI core metrics default on, unless task time is l0 or off (pai1:343-364). */
static bool v1_ai_core(const struct options *o)
{
	return !strcmp(params_sw(o, "ai-core", strcmp(v1_level(o), "l1") ? "off" : "on"), "on");
}

static bool v1_task_based(const struct options *o)
{
	return !strcmp(params_sw(o, "aic-mode", "task-based"), "task-based");
}

uint64_t params_v1_data_type_config(const struct options *o, const struct chip_info *chip)
{
	const char *level = v1_level(o), *ge = params_sw(o, "ge-api", "off");
	uint64_t b = 0;

	if (!params_sw_is(o, "ascendcl", "off"))
		b |= PROF_ACL_API;
	if (strcmp(level, "off")) {
		b |= PROF_TASK_TIME_L0 | PROF_KEYPOINT_TRACE | PROF_KEYPOINT_TRACE_HELPER |
		     PROF_RUNTIME_TRACE | PROF_MODEL_LOAD | PROF_OP_DETAIL;
		if (!strcmp(level, "l1"))
			b |= PROF_TASK_TIME_L1;
	}
	if (params_sw_is(o, "model-execution", "on"))
		b |= PROF_MODEL_LOAD | PROF_OP_DETAIL | PROF_FWK_SCHEDULE_L0 | PROF_FWK_SCHEDULE_L1;
	if (!strcmp(ge, "l0") || !strcmp(ge, "l1"))
		b |= PROF_FWK_SCHEDULE_L0 | (!strcmp(ge, "l1") ? PROF_FWK_SCHEDULE_L1 : 0);
	if (params_sw_is(o, "runtime-api", "on"))
		b |= PROF_RUNTIME_API;
	if (params_sw_is(o, "aicpu", "on"))
		b |= PROF_AICPU_TRACE;
	if (params_sw_is(o, "hccl", "on"))
		b |= PROF_HCCL_TRACE;
	if (params_sw_is(o, "l2", "on"))
		b |= PROF_L2CACHE;
	if (params_sw_is(o, "task-memory", "on"))
		b |= PROF_TASK_MEMORY;
	if (v1_ai_core(o) && v1_task_based(o)) {
		b |= PROF_AICORE_METRICS;
		if (!chip || chip->aiv)
			b |= PROF_AIV_METRICS;
	}
	return b;
}

static void v1_task_time(struct paramset *ps, const struct options *o, const struct chip_info *chip)
{
	const char *level = v1_level(o);

	paramset_set(ps, "profLevel", level);
	if (!strcmp(level, "off"))
		return;
	paramset_set(ps, "ts_keypoint", "on");
	params_set_task_logs(ps, chip);
}

static void v1_ai_core_keys(struct paramset *ps, const struct options *o, const struct chip_info *chip)
{
	bool on = v1_ai_core(o);
	const char *mode = params_sw(o, "aic-mode", "task-based");

	paramset_set(ps, "ai_core_profiling", on ? "on" : "off");
	paramset_set(ps, "aiv_profiling", on && (!chip || chip->aiv) ? "on" : "off");
	paramset_set(ps, "ai_core_profiling_mode", mode);
	paramset_set(ps, "aiv_profiling_mode", mode);
	if (!on)
		return;
	params_set_metrics(ps, o, chip, NULL);
}

/* v1 names the host switches per item (SetParamsForHost* of the v1 adapter). */
static void v1_host(struct paramset *ps, const struct options *o)
{
	const char *usage = params_sw(o, "host-sys-usage", "");
	int ms = params_interval_ms(o, "host-sys-usage-freq");
	char sys[64];

	/* osrt, cpu and mem are dynprof's own (user/hostdata/): CANN gets the rest. */
	hostsys_for_cann(params_sw(o, "host-sys", ""), sys, sizeof(sys));

	if (*sys)
		paramset_set(ps, "host_sys", "on");
	if (strstr(sys, "cpu"))
		paramset_set(ps, "host_one_pid_cpu_profiling", "on");
	if (strstr(sys, "mem"))
		paramset_set(ps, "host_one_pid_mem_profiling", "on");
	if (strstr(sys, "disk"))
		paramset_set(ps, "host_disk_profiling", "on");
	if (strstr(sys, "network"))
		paramset_set(ps, "host_network_profiling", "on");
	if (strstr(sys, "osrt"))
		paramset_set(ps, "host_osrt_profiling", "on");
	if (*usage)
		paramset_set(ps, "host_sys_usage", "on");
	if (strstr(usage, "cpu")) {
		paramset_set(ps, "host_sys_cpu_profiling", "on");
		paramset_set(ps, "host_all_pid_cpu_profiling", "on");
	}
	if (strstr(usage, "mem")) {
		paramset_set(ps, "host_sys_mem_profiling", "on");
		paramset_set(ps, "host_all_pid_mem_profiling", "on");
	}
	if (ms > 0) {
		paramset_num(ps, "host_cpu_profiling_sampling_interval", ms);
		paramset_num(ps, "host_mem_profiling_sampling_interval", ms);
	}
	if (options_switch(o, "host-sys-pid"))
		paramset_num(ps, "host_sys_pid", atoll(options_switch(o, "host-sys-pid")));
}

void params_v1_derive(struct paramset *ps, const struct options *o, const struct chip_info *chip)
{
	static const struct {
		const char *option, *key;
	} direct[] = {
		{ "msproftx", "msproftx" },
		{ "ge-api", "ge_api" },
		{ "task-memory", "taskMemory" },
		{ "storage-limit", "storageLimit" },
		{ "environment", "app_env" },
		{ "sys-profiling", "sys_profiling" },
		{ "sys-pid-profiling", "pid_profiling" },
	};
	int ms;

	for (size_t i = 0; i < sizeof(direct) / sizeof(direct[0]); i++)
		if (options_switch(o, direct[i].option))
			paramset_set(ps, direct[i].key, options_switch(o, direct[i].option));
	v1_task_time(ps, o, chip);
	v1_ai_core_keys(ps, o, chip);
	if (params_sw_is(o, "l2", "on")) {
		paramset_set(ps, "l2CacheTaskProfiling", "on");
		paramset_set(ps, "l2CacheTaskProfilingEvents", chip ? chip->l2_events : "");
	}
	/* v1 copies msproftx into ts_keypoint (pai1:56-67). */
	if (params_sw_is(o, "msproftx", "on"))
		paramset_set(ps, "ts_keypoint", "on");
	v1_host(ps, o);
	if ((ms = params_interval_ms(o, "sys-sampling-freq")) > 0)
		paramset_num(ps, "sys_sampling_interval", ms);
	if ((ms = params_interval_ms(o, "sys-pid-sampling-freq")) > 0)
		paramset_num(ps, "pid_sampling_interval", ms);
	paramset_u64(ps, "dataTypeConfig", params_v1_data_type_config(o, chip));
}
