// SPDX-License-Identifier: MIT
/*
 * The 9.x (and 8.5.0) keys each switch sets, as msprof 9.1 sets them
 * (docs/PROTOCOL.md Part 2 section 4.4; input_parser.cpp, running_mode.cpp).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/hostsys.h"
#include "config/params_derive.h"

/* Switches whose value goes to one key unchanged. */
static const struct {
	const char *option, *key;
} direct[] = {
	{ "ascendcl", "acl" },
	{ "runtime-api", "runtimeApi" },
	{ "aicpu", "aicpuTrace" },
	{ "hccl", "hcclTrace" },
	{ "msproftx", "msproftx" },
	{ "mstx-domain-include", "mstxDomainInclude" },
	{ "mstx-domain-exclude", "mstxDomainExclude" },
	{ "l2", "l2CacheTaskProfiling" },
	{ "ge-api", "geApi" },
	{ "task-memory", "taskMemory" },
	{ "task-tsfw", "taskTsfw" },
	{ "storage-limit", "storageLimit" },
	{ "environment", "app_env" },
	{ "sys-profiling", "sys_profiling" },
	{ "sys-pid-profiling", "pid_profiling" },
};

/* --host-sys items and the key each turns on. */
static const struct {
	const char *item, *key;
} host_sys_keys[] = {
	{ "cpu", "host_cpu_profiling" },   { "mem", "host_mem_profiling" },
	{ "disk", "host_disk_profiling" }, { "network", "host_network_profiling" },
	{ "osrt", "host_osrt_profiling" }, { "numa", "host_numa_profiling" },
};

/*
 * Task time: taskTime as given; when not off, the task logs of the chip
 * (STARS or HWTS) and ts_memcpy (the defaults msprof fills, rm9:807-833),
 * and a given level also goes raw to prof_level (ip9:1979-1993).
 */
static void task_time(struct paramset *ps, const struct options *o, const struct chip_info *chip)
{
	const char *tt = params_sw(o, "task-time", "on");

	paramset_set(ps, "taskTime", tt);
	if (!strcmp(tt, "off")) {
		paramset_set(ps, "ts_memcpy", "");
		return;
	}
	if (options_switch(o, "task-time"))
		paramset_set(ps, "prof_level", tt);
	params_set_task_logs(ps, chip);
}

static void ai_core(struct paramset *ps, const struct options *o, const struct chip_info *chip)
{
	bool nano = chip && chip->id == CHIP_NANO_V1;
	const char *aic = params_sw(o, "ai-core", "on");
	const char *mode = params_sw(o, "aic-mode", "task-based");
	bool on = !strcmp(aic, "on");
	int ms;

	paramset_set(ps, "ai_core_profiling", aic);
	paramset_set(ps, "ai_core_profiling_mode", mode);
	paramset_set(ps, "aiv_profiling_mode", nano ? params_sw(o, "aiv-mode", mode) : mode);
	/* aiv_profiling follows ai_core; with --ai-core=off it stays "" (rm9:729-731). */
	paramset_set(ps, "aiv_profiling",
		     nano ? params_sw(o, "ai-vector-core", on ? "on" : "") :
		     on   ? "on" :
			    "");
	paramset_set(ps, "ai_core_lpm",
		     on && strcmp(mode, "sample-based") && (!chip || chip->lpm) ? "on" : "off");
	params_set_metrics(ps, o, chip, nano ? options_switch(o, "aiv-metrics") : NULL);
	if (nano && (ms = params_interval_ms(o, "aiv-freq")) > 0)
		paramset_num(ps, "aiv_sampling_interval", ms);
}

/* --l2=on: the chip's L2 list; on SOC-PMU chips also npuEvents (platform.cpp L2CacheAdaptor). */
static void l2_events(struct paramset *ps, const struct options *o, const struct chip_info *chip)
{
	char npu[256];

	if (!params_sw_is(o, "l2", "on") || !chip)
		return;
	paramset_set(ps, "l2CacheTaskProfilingEvents", chip->l2_events);
	if (chip->soc_pmu) {
		snprintf(npu, sizeof(npu), "HA:%s;SMMU:0x2,0x8a,0x8b,0x8c,0x8d", chip->l2_events);
		paramset_set(ps, "npuEvents", npu);
	}
}

static void host(struct paramset *ps, const struct options *o)
{
	const char *sys = options_switch(o, "host-sys");
	const char *usage = options_switch(o, "host-sys-usage");
	char cann[64] = "";
	int ms;

	if (sys)
		hostsys_for_cann(sys, cann, sizeof(cann));
	/* osrt, cpu and mem are dynprof's own (user/hostdata/): CANN gets the rest. */
	if (*cann) {
		paramset_set(ps, "host_sys", cann);
		for (size_t i = 0; i < sizeof(host_sys_keys) / sizeof(host_sys_keys[0]); i++)
			if (hostsys_list_has(cann, host_sys_keys[i].item))
				paramset_set(ps, host_sys_keys[i].key, "on");
		paramset_num(ps, "host_disk_freq", 50);
	}
	if (usage) {
		paramset_set(ps, "hostSysUsage", usage);
		if (hostsys_list_has(usage, "cpu"))
			paramset_set(ps, "hostAllPidCpuProfiling", "on");
		if (hostsys_list_has(usage, "mem"))
			paramset_set(ps, "hostAllPidMemProfiling", "on");
	}
	ms = params_interval_ms(o, "host-sys-usage-freq");
	if (ms > 0)
		paramset_num(ps, "hostProfilingSamplingInterval", ms);
	if (options_switch(o, "host-sys-pid"))
		paramset_num(ps, "host_sys_pid", atoll(options_switch(o, "host-sys-pid")));
}

void params_v2_derive(struct paramset *ps, const struct options *o, const struct chip_info *chip)
{
	int ms;

	for (size_t i = 0; i < sizeof(direct) / sizeof(direct[0]); i++) {
		const char *v = options_switch(o, direct[i].option);

		if (v)
			paramset_set(ps, direct[i].key, v);
	}
	task_time(ps, o, chip);
	ai_core(ps, o, chip);
	l2_events(ps, o, chip);
	host(ps, o);
	if ((ms = params_interval_ms(o, "sys-sampling-freq")) > 0)
		paramset_num(ps, "sys_sampling_interval", ms);
	if ((ms = params_interval_ms(o, "sys-pid-sampling-freq")) > 0)
		paramset_num(ps, "pid_sampling_interval", ms);
	/* --model-execution and --type set no key (ip9:2008-2010; exportType is not sent). */
}
