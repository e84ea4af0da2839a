// SPDX-License-Identifier: MIT
/*
 * The one matcher of --container, --user, --exe and the start/stop/quit
 * selectors (model/match.c): each key's meaning, a selector read as its
 * option is, and how the filters combine. A user name is tried against
 * this process itself (its own passwd is the host's), the rest is pure.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/hostpw.h"
#include "config/options.h"
#include "config/rule.h"
#include "model/match.h"
#include "unit.h"

#define ID "3f4e5d6c7b8a99887766554433221100ffeeddccbbaa00112233445566778899"

static struct pm_proc proc(int pid, uid_t uid, const char *exe, const char *id, const char *name)
{
	struct pm_proc p = { .pid = pid, .uid = uid, .nslevels = 1 };

	snprintf(p.exe, sizeof(p.exe), "%s", exe);
	snprintf(p.container, sizeof(p.container), "%s", id);
	snprintf(p.container_name, sizeof(p.container_name), "%s", name);
	return p;
}

/* A selector as the console, --commands and --control read it. */
static bool sel_matches(const struct pm_proc *p, const char *text)
{
	struct selector sel;
	char err[256];

	if (selector_parse(text, &sel, err, sizeof(err))) {
		printf("  selector %s: %s\n", text, err);
		return false;
	}
	return match_selector(p, &sel);
}

TEST(selector_all_pid_and_container)
{
	struct pm_proc in = proc(4242, 1000, "/usr/bin/python3", ID, "trainjob");
	struct pm_proc host = proc(7, 1000, "/usr/bin/python3", "", "");

	CHECK(sel_matches(&in, "all"));
	CHECK(sel_matches(&in, "pid=4242"));
	CHECK(!sel_matches(&in, "pid=424"));
	CHECK(sel_matches(&in, "container=trainjob"));
	CHECK(sel_matches(&in, "container=" ID));
	CHECK(sel_matches(&in, "container=3f4e"));
	CHECK(!sel_matches(&in, "container=3f4"));   /* a prefix has at least 4 hex digits */
	CHECK(!sel_matches(&in, "container=train")); /* a name is whole */
	CHECK(!sel_matches(&host, "container=trainjob"));
}

/* A uid is the host's, the same for the option and the selector. */
TEST(user_number_is_the_hosts_uid)
{
	struct pm_proc p = proc(999999999, 1000, "/bin/x", ID, "job");

	CHECK(match_user(&p, "1000"));
	CHECK(!match_user(&p, "0"));
	CHECK(sel_matches(&p, "user=1000"));
	CHECK(!sel_matches(&p, "user=1001"));
}

/*
 * A name: this process's own passwd is the host's, so the name of its uid
 * takes it, through --user and user= alike; a name no passwd has does not.
 */
TEST(user_name_of_this_process)
{
	struct pm_proc me = proc(getpid(), getuid(), "/bin/x", "", "");
	char name[256], sel[300];

	REQUIRE(hostpw_name(getuid(), name, sizeof(name)) == 0);
	snprintf(sel, sizeof(sel), "user=%s", name);
	CHECK(match_user(&me, name));
	CHECK(sel_matches(&me, sel));
	CHECK(!match_user(&me, "dynprof-no-such-user"));
	CHECK(!sel_matches(&me, "user=dynprof-no-such-user"));
}

TEST(exe_glob_takes_the_path_or_the_base_name)
{
	struct pm_proc p = proc(5, 0, "/opt/job/bin/python3.10", "", "");
	struct pm_proc unreadable = proc(6, 0, "", "", "");

	CHECK(match_exe(&p, "python3*"));
	CHECK(match_exe(&p, "/opt/*/python3.10"));
	CHECK(!match_exe(&p, "bin/python3.10"));
	CHECK(!match_exe(&p, "python"));
	CHECK(!match_exe(&unreadable, "*"));
}

/* Any value of one option, every option given; none given takes all. */
TEST(filters_any_value_of_each_every_option)
{
	struct pm_proc p = proc(5, 1000, "/usr/bin/python3", ID, "trainjob");
	struct options o;

	memset(&o, 0, sizeof(o));
	CHECK(match_filters(&o, &p));
	o.ncontainers = 2;
	o.containers[0] = "evaljob";
	o.containers[1] = "trainjob";
	CHECK(match_filters(&o, &p));
	o.nexes = 1;
	o.exes[0] = "bash";
	CHECK(!match_filters(&o, &p));
	o.exes[0] = "python*";
	CHECK(match_filters(&o, &p));
	o.nusers = 2;
	o.users[0] = "0";
	o.users[1] = "1000";
	CHECK(match_filters(&o, &p));
	o.users[1] = "1001";
	CHECK(!match_filters(&o, &p));
	o.users[1] = "1000";
	o.containers[1] = "other";
	CHECK(!match_filters(&o, &p));
}

UNIT_MAIN()
