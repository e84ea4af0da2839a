// SPDX-License-Identifier: MIT
/* common/procstat.c: the one /proc/<pid>/stat parser. */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "common/procstat.h"
#include "unit.h"

TEST(fields_counted_after_the_last_paren)
{
	/* comm "a) b (c" : spaces and both parentheses. */
	static const char line[] =
		"4242 (a) b (c) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 "
		"987654321 1000 100 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
	struct procstat st = { 0 };

	CHECK_INT(procstat_parse(line, &st), 0);
	CHECK_INT(st.state, 'S');
	CHECK_INT(st.flags, 4194560);
	CHECK(st.utime == 1 && st.stime == 2); /* fields 14 and 15: cpu time in ticks */
	CHECK(st.start == 987654321ULL);
	CHECK(st.vsize == 1000);
}

TEST(comm_of_only_parens_and_digits)
{
	/* A comm that looks like fields: "1) R 2 (3" */
	static const char line[] = "9 (1) R 2 (3) Z 1 9 9 0 -1 4 0 0 0 0 0 0 0 0 20 0 1 0 55\n";
	struct procstat st = { 0 };

	CHECK_INT(procstat_parse(line, &st), 0);
	CHECK_INT(st.state, 'Z');
	CHECK_INT(st.flags, 4);
	CHECK(st.start == 55);
	CHECK(st.vsize == 0); /* the line stops at field 22 */
	CHECK(procstat_dead(st.state));
	CHECK(!procstat_dead('S'));
}

TEST(short_or_bad_lines_are_einval)
{
	struct procstat st = { .state = '?' };

	CHECK_INT(procstat_parse("1 (x) S 1 2 3\n", &st), -EINVAL);
	CHECK_INT(procstat_parse("no paren here", &st), -EINVAL);
	CHECK_INT(procstat_parse("1 (x)", &st), -EINVAL);
	/* flags (9) and start (22) must be numbers. */
	CHECK_INT(procstat_parse("7 (z) S 1 7 7 0 -1 x 0 0 0 0 0 0 0 0 20 0 1 0 55 0\n", &st), -EINVAL);
	CHECK_INT(procstat_parse("7 (z) S 1 7 7 0 -1 4 0 0 0 0 0 0 0 0 20 0 1 0 -55 0\n", &st), -EINVAL);
	CHECK_INT(st.state, '?'); /* untouched on error */
}

TEST(reads_this_process_and_not_a_missing_one)
{
	char path[64];
	struct procstat a = { 0 }, b = { 0 };

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)getpid());
	CHECK_INT(procstat_read(path, &a), 0);
	CHECK_INT(procstat_read("/proc/self/stat", &b), 0);
	CHECK(a.start == b.start && a.start > 0);
	CHECK_INT(a.state, 'R');
	CHECK(a.vsize > 0);
	CHECK_INT(procstat_read("/proc/1073741823/stat", &a), -ESRCH);
}

UNIT_MAIN()
