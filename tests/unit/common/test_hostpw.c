// SPDX-License-Identifier: MIT
/*
 * The host's users (common/hostpw.c), checked against the C library's own
 * answer for this process's uid and for root; a user no one has.
 */
#include <pwd.h>
#include <string.h>
#include <unistd.h>

#include "common/hostpw.h"
#include "unit.h"

TEST(name_uid_and_home_agree_with_getpwuid)
{
	struct passwd *pw = getpwuid(getuid());
	char name[256], home[4096], want[4096];
	size_t n;
	uid_t uid = (uid_t)-1;

	REQUIRE(pw);
	snprintf(want, sizeof(want), "%s", pw->pw_dir);
	n = strlen(want);
	while (n > 1 && want[n - 1] == '/')
		want[--n] = '\0';
	CHECK_INT(hostpw_name(getuid(), name, sizeof(name)), 0);
	CHECK_STR(name, pw->pw_name);
	CHECK_INT(hostpw_uid(name, &uid), 0);
	CHECK_INT(uid, getuid());
	gid_t gid = (gid_t)-1;
	CHECK_INT(hostpw_gid(getuid(), &gid), 0);
	CHECK_INT(gid, pw->pw_gid);
	if (want[0]) {
		CHECK_INT(hostpw_home(getuid(), home, sizeof(home)), 0);
		CHECK_STR(home, want);
	}
}

TEST(root_is_uid_0)
{
	uid_t uid = 1;

	CHECK_INT(hostpw_uid("root", &uid), 0);
	CHECK_INT(uid, 0);
}

TEST(missing_user_and_short_buffer)
{
	char name[1];
	uid_t uid;

	CHECK_INT(hostpw_uid("dynprof-no-such-user", &uid), -ENOENT);
	CHECK_INT(hostpw_name(0, name, sizeof(name)), -ENAMETOOLONG);
	CHECK_INT(hostpw_name((uid_t)4294967290u, name, sizeof(name)), -ENOENT);
}

UNIT_MAIN()
