// SPDX-License-Identifier: MIT
/* The PROF_ folder name: the shape CANN's tools and dynprof's parser expect. */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "shared/profname.h"
#include "unit.h"

static struct tm new_year(void)
{
	struct tm tm = {
		.tm_year = 2026 - 1900, .tm_mon = 0, .tm_mday = 1, .tm_hour = 12, .tm_min = 0, .tm_sec = 0
	};
	return tm;
}

TEST(name_matches_documented_example)
{
	const unsigned char rnd[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	struct tm tm = new_year();
	char name[PROFNAME_LEN + 1];

	CHECK_INT(profname_format(name, sizeof(name), 1, &tm, 123, 12345, rnd), PROFNAME_LEN);
	CHECK_STR(name, "PROF_000001_20260101120000123_00012345ABCDEFGH");
}

TEST(v1_name_has_sixteen_letters_and_no_pid)
{
	const unsigned char rnd[16] = { 9, 11, 11, 11, 6, 1, 10, 4, 2, 10, 16, 7, 1, 0, 1, 2 };
	struct tm tm = {
		.tm_year = 2026 - 1900, .tm_mon = 11, .tm_mday = 1, .tm_hour = 8, .tm_min = 0, .tm_sec = 12
	};
	char name[PROFNAME_V1_LEN + 1];

	CHECK_INT(profname_format_v1(name, sizeof(name), 1, &tm, 605, rnd), PROFNAME_V1_LEN);
	CHECK_STR(name, "PROF_000001_20261201080012605_JLLLGBKECKQHBABC");
	CHECK_INT(profname_format_v1(name, sizeof(name), 1000000, &tm, 0, rnd), -EINVAL);
}

TEST(letters_stay_between_A_and_R)
{
	CHECK_INT(profname_letter(17), 'R');
	CHECK_INT(profname_letter(18), 'A');
	CHECK_INT(profname_letter(255), 'A' + 255 % 18);
	for (int b = 0; b < 256; b++)
		CHECK(profname_letter((unsigned char)b) >= 'A' &&
		      profname_letter((unsigned char)b) <= 'R');
}

TEST(fields_are_zero_padded_to_fixed_widths)
{
	const unsigned char rnd[8] = { 17, 17, 17, 17, 17, 17, 17, 17 };
	struct tm tm = {
		.tm_year = 2027 - 1900, .tm_mon = 8, .tm_mday = 3, .tm_hour = 4, .tm_min = 5, .tm_sec = 6
	};
	char name[PROFNAME_LEN + 1];

	CHECK_INT(profname_format(name, sizeof(name), 42, &tm, 7, 1, rnd), PROFNAME_LEN);
	CHECK_STR(name, "PROF_000042_20270903040506007_00000001RRRRRRRR");
}

TEST(largest_pid_keeps_eight_digits)
{
	const unsigned char rnd[8] = { 0 };
	struct tm tm = new_year();
	char name[PROFNAME_LEN + 1];

	CHECK_INT(profname_format(name, sizeof(name), 1, &tm, 999, 99999999, rnd), PROFNAME_LEN);
	CHECK_STR(name, "PROF_000001_20260101120000999_99999999AAAAAAAA");
}

TEST(values_that_would_break_the_shape_are_refused)
{
	const unsigned char rnd[8] = { 0 };
	struct tm tm = new_year();
	char name[64];

	CHECK_INT(profname_format(name, sizeof(name), 1000000, &tm, 0, 1, rnd), -EINVAL);
	CHECK_INT(profname_format(name, sizeof(name), 1, &tm, 1000, 1, rnd), -EINVAL);
	CHECK_INT(profname_format(name, sizeof(name), 1, &tm, 0, 100000000, rnd), -EINVAL);
}

TEST(short_buffer_is_an_error_not_a_cut_name)
{
	const unsigned char rnd[8] = { 0 };
	struct tm tm = new_year();
	char name[PROFNAME_LEN];

	CHECK_INT(profname_format(name, sizeof(name), 1, &tm, 0, 1, rnd), -ENAMETOOLONG);
}

UNIT_MAIN()
