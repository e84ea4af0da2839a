// SPDX-License-Identifier: MIT
/* results/winaccount.c: a finished PROF_ folder, and an account as JSON (real folders under /tmp). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "results/winaccount.h"
#include "unit.h"

#define NAME "PROF_000001_20260101120000123_00001234ABCDEFGH"

static char base[64];

static void make_base(void)
{
	snprintf(base, sizeof(base), "/tmp/dp-winaccount.XXXXXX");
	REQUIRE(mkdtemp(base) != NULL);
	REQUIRE(setenv("B", base, 1) == 0 && setenv("N", NAME, 1) == 0);
}

/* A shell command on the test folder: $B is it, $N the folder's name. */
static void sh(const char *cmd)
{
	REQUIRE(system(cmd) == 0);
}

TEST(end_info_makes_a_folder_finished)
{
	make_base();
	sh("mkdir -p $B/$N/host && touch $B/$N/host/end_info");
	CHECK_INT(winaccount_prof_finished(base, NAME), 1);
	sh("rm $B/$N/host/end_info");
	CHECK_INT(winaccount_prof_finished(base, NAME), 0);
	sh("rm -r $B/$N/host");
	CHECK_INT(winaccount_prof_finished(base, NAME), 0);
	sh("rm -r $B/$N");
	CHECK_INT(winaccount_prof_finished(base, NAME), -ENOENT);
	sh("rm -r $B");
}

TEST(planted_symlinks_and_non_files_are_not_finished)
{
	make_base();
	sh("mkdir -p $B/$N/host && ln -s /etc/passwd $B/$N/host/end_info");
	CHECK_INT(winaccount_prof_finished(base, NAME), 0);
	sh("rm $B/$N/host/end_info && mkdir $B/$N/host/end_info");
	CHECK_INT(winaccount_prof_finished(base, NAME), 0);
	/* host a symlink to a finished host elsewhere; the folder itself a symlink */
	sh("rm -r $B/$N/host && mkdir -p $B/real/host && touch $B/real/host/end_info");
	sh("ln -s $B/real/host $B/$N/host");
	CHECK(winaccount_prof_finished(base, NAME) != 1);
	sh("rm -r $B/$N && ln -s $B/real $B/$N");
	CHECK(winaccount_prof_finished(base, NAME) != 1);
	sh("rm -r $B");
}

TEST(account_as_json_names_fate_folders_and_reason)
{
	struct window_account a = {
		.fate = WINDOW_INCOMPLETE, .ended = "exit", .nprof = 1, .opened_us = 5, .closed_us = 9
	};
	cJSON *o = cJSON_CreateObject();
	char *text;

	snprintf(a.prof[0], sizeof(a.prof[0]), "%s", NAME);
	snprintf(a.reason, sizeof(a.reason), "no end_info \x1b[31m");
	winaccount_to_json(&a, "/out", o);
	text = cJSON_PrintUnformatted(o);
	CHECK_STR(text, "{\"fate\":\"incomplete\",\"ended\":\"exit\",\"prof\":[\"/out/" NAME
			"\"],\"reason\":\"no end_info \\\\x1b[31m\",\"opened_us\":5,\"closed_us\":9}");
	free(text);
	cJSON_Delete(o);
	a.fate = WINDOW_SAVED;
	o = cJSON_CreateObject();
	winaccount_to_json(&a, "/out", o);
	CHECK(cJSON_GetObjectItem(o, "reason") == NULL);
	CHECK_STR(cJSON_GetObjectItem(o, "fate")->valuestring, "saved");
	cJSON_Delete(o);
	CHECK_STR(window_fate_name(WINDOW_LOST), "lost");
}

UNIT_MAIN()
