// SPDX-License-Identifier: MIT
/*
 * What the agent's PROF_ folder tells msprof's analysis about itself
 * (/work/shared rules, docs/HOSTDATA.md "What msprof needs"): a host
 * collection (empty DeviceInfo, device 64 in info.json and sample.json),
 * a chip msprof knows, integers where msprof computes. The agent's sources
 * are compiled into this test, as in test_agent_params.c.
 */
#include <stdbool.h>
#include <dirent.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "../../user/agent/config.c"
#include "../../user/agent/params.c"
#include "../../user/agent/params_json.c"
#include "../../user/agent/profdir.c"
#include "unit.h"

static cJSON *parse_file(const char *dir, const char *name)
{
	char path[PATH_MAX], buf[65536];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/host/%s", dir, name);
	f = fopen(path, "re");
	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	if (strchr(buf, '\n')) /* msprof reads the first line only */
		return NULL;
	return cJSON_Parse(buf);
}

static int is_integer(const cJSON *v)
{
	return cJSON_IsNumber(v) && v->valuedouble == (double)(long long)v->valuedouble;
}

TEST(info_json_describes_a_host_collection_msprof_can_export)
{
	char *text = hostinfo_json(15, getpid(), "/proc/self/net/dev");
	cJSON *root = text ? cJSON_Parse(text) : NULL;
	const cJSON *di, *cpu;

	REQUIRE(root);
	CHECK(!strchr(text, '\n'));
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(root, "platform_version")), "15");
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(root, "devices")), "64");
	di = cJSON_GetObjectItemCaseSensitive(root, "DeviceInfo");
	CHECK(cJSON_IsArray(di) && cJSON_GetArraySize(di) == 0);
	CHECK(is_integer(cJSON_GetObjectItemCaseSensitive(root, "drvVersion")));
	CHECK(is_integer(cJSON_GetObjectItemCaseSensitive(root, "cpuNums")));
	CHECK(is_integer(cJSON_GetObjectItemCaseSensitive(root, "sysClockFreq")));
	CHECK(is_integer(cJSON_GetObjectItemCaseSensitive(root, "memoryTotal")));
	cpu = cJSON_GetObjectItemCaseSensitive(root, "CPU");
	CHECK(cJSON_IsArray(cpu) && cJSON_GetArraySize(cpu) > 0);
	CHECK(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(cpu, 0), "Frequency")));
	CHECK(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(root, "netCard")));
	/* dynprof's chip detection knows the agent's folders by it */
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(root, "cannVersion")), "none");
	cJSON_Delete(root);
	free(text);
}

/* Every interface of this namespace, as msprof's Network lane wants them: lo without a speed drawn at 10000. */
TEST(net_cards_name_this_namespaces_interfaces_with_a_speed)
{
	char *text = hostinfo_json(5, getpid(), "/proc/self/net/dev");
	cJSON *root = text ? cJSON_Parse(text) : NULL;
	const cJSON *cards, *c;
	bool lo = false;

	REQUIRE(root);
	cards = cJSON_GetObjectItemCaseSensitive(root, "netCard");
	REQUIRE(cJSON_IsArray(cards));
	CHECK(cJSON_GetArraySize(cards) >= 1);
	cJSON_ArrayForEach(c, cards)
	{
		const char *name =
			cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "netCardName"));
		const cJSON *speed = cJSON_GetObjectItemCaseSensitive(c, "speed");

		CHECK(name && *name);
		CHECK(is_integer(speed) && speed->valuedouble > 0);
		if (name && !strcmp(name, "lo")) {
			lo = true;
			CHECK(speed->valuedouble == HOSTINFO_NET_SPEED_NONE);
		}
	}
	CHECK(lo);
	cJSON_Delete(root);
	free(text);
}

TEST(chip_variable_takes_only_chips_msprof_knows)
{
	struct agent_config cfg;
	const char *bad = NULL;
	static const char *const refused[] = { "6", "10", "12", "17", "256", "-1", "5x", "" };

	unsetenv(AGENT_CHIP_ENV);
	CHECK_INT(agent_config_load(&cfg, &bad), 0);
	CHECK_INT(cfg.chip, AGENT_CHIP_DEFAULT);
	setenv(AGENT_CHIP_ENV, "16", 1);
	CHECK_INT(agent_config_load(&cfg, &bad), 0);
	CHECK_INT(cfg.chip, 16);
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		setenv(AGENT_CHIP_ENV, refused[i], 1);
		bad = NULL;
		CHECK_INT(agent_config_load(&cfg, &bad), -EINVAL);
		CHECK(bad && !strcmp(bad, AGENT_CHIP_ENV));
	}
	unsetenv(AGENT_CHIP_ENV);
}

/* The folder's sample.json and info.json as profdir_open writes them. */
TEST(window_folder_names_device_64_and_keeps_the_params)
{
	char dir[] = "/tmp/dp-hostinfo.XXXXXX", params[PATH_MAX + 96];
	struct profdir pd;
	cJSON *sample, *info;

	REQUIRE(mkdtemp(dir));
	snprintf(params, sizeof(params),
		 "{\"result_dir\":\"%s\",\"devices\":\"0,1\",\"host_sys_pid\":-1}", dir);
	REQUIRE(profdir_open(&pd, 0, params, 9) == 0);
	sample = parse_file(pd.host.path, "sample.json");
	info = parse_file(pd.host.path, "info.json");
	REQUIRE(sample && info);
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(sample, "devices")), "64");
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(sample, "result_dir")), dir);
	CHECK(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(sample, "host_sys_pid")) == -1);
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(info, "platform_version")), "9");
	cJSON_Delete(sample);
	cJSON_Delete(info);
	CHECK_INT(profdir_close(&pd), 0);
	{
		char cmd[PATH_MAX + 16];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		CHECK_INT(system(cmd), 0);
	}
}

UNIT_MAIN()
