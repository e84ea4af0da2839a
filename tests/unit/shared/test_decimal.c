// SPDX-License-Identifier: MIT
/* shared/decimal.c: the one strict decimal parser. */
#include <errno.h>
#include <stdint.h>

#include "shared/array_size.h"
#include "shared/decimal.h"
#include "unit.h"

TEST(whole_numbers_in_range)
{
	uint64_t v = 7;
	int i = 7;

	CHECK_INT(decimal_u64("0", 0, 10, &v), 0);
	CHECK_INT(v, 0);
	CHECK_INT(decimal_u64("10", 0, 10, &v), 0);
	CHECK_INT(v, 10);
	CHECK_INT(decimal_u64("18446744073709551615", 0, UINT64_MAX, &v), 0);
	CHECK(v == UINT64_MAX);
	CHECK_INT(decimal_int("2147483647", 1, 2147483647, &i), 0);
	CHECK_INT(i, 2147483647);
	CHECK_INT(decimal_int("007", 1, 50, &i), 0);
	CHECK_INT(i, 7);
}

TEST(bounds_are_erange_and_leave_out_alone)
{
	uint64_t v = 7;
	int i = 7;

	CHECK_INT(decimal_u64("11", 0, 10, &v), -ERANGE);
	CHECK_INT(decimal_u64("4", 5, 10, &v), -ERANGE);
	CHECK_INT(decimal_u64("18446744073709551616", 0, UINT64_MAX, &v), -ERANGE);
	CHECK_INT(decimal_u64("99999999999999999999999", 0, UINT64_MAX, &v), -ERANGE);
	CHECK_INT(v, 7);
	CHECK_INT(decimal_int("0", 1, 50, &i), -ERANGE);
	CHECK_INT(decimal_int("51", 1, 50, &i), -ERANGE);
	CHECK_INT(decimal_int("2147483648", 0, 2147483647, &i), -ERANGE);
	CHECK_INT(i, 7);
}

TEST(anything_but_digits_is_einval)
{
	static const char *const bad[] = { "",     " 1",  "1 ",  "+1",  "-1",
					   "0x10", "1.5", "1e3", "12a", "\xd9\xa3" };
	uint64_t v = 7;

	for (size_t k = 0; k < ARRAY_SIZE(bad); k++)
		CHECK_INT(decimal_u64(bad[k], 0, UINT64_MAX, &v), -EINVAL);
	CHECK_INT(decimal_u64(NULL, 0, UINT64_MAX, &v), -EINVAL);
	/* Junk after too large a number is junk first. */
	CHECK_INT(decimal_u64("999x", 0, 10, &v), -EINVAL);
	CHECK_INT(v, 7);
}

TEST(prefix_reports_digits_used)
{
	uint64_t v = 0;
	size_t used = 99;

	CHECK_INT(decimal_prefix("200MB", SIZE_MAX, UINT64_MAX, &v, &used), 0);
	CHECK_INT(v, 200);
	CHECK_INT(used, 3);
	CHECK_INT(decimal_prefix("MB", SIZE_MAX, UINT64_MAX, &v, &used), -EINVAL);
	CHECK_INT(used, 0);
	/* Too large: still says where the digits end. */
	CHECK_INT(decimal_prefix("12345]", SIZE_MAX, 999, &v, &used), -ERANGE);
	CHECK_INT(used, 5);
	/* len stops the scan even inside a run of digits. */
	CHECK_INT(decimal_prefix("123456", 2, UINT64_MAX, &v, &used), 0);
	CHECK_INT(v, 12);
	CHECK_INT(used, 2);
	CHECK_INT(decimal_prefix("7", 1, UINT64_MAX, &v, NULL), 0);
	CHECK_INT(v, 7);
}

TEST(span_wants_every_byte)
{
	static const char text[] = "4242 rest";
	uint64_t v = 0;

	CHECK_INT(decimal_span(text, 4, 0, UINT64_MAX, &v), 0);
	CHECK_INT(v, 4242);
	CHECK_INT(decimal_span(text, 5, 0, UINT64_MAX, &v), -EINVAL);
	CHECK_INT(decimal_span(text, 0, 0, UINT64_MAX, &v), -EINVAL);
	CHECK_INT(decimal_span(text, 4, 0, 4241, &v), -ERANGE);
	CHECK_INT(decimal_span(text, 4, 4243, UINT64_MAX, &v), -ERANGE);
}

UNIT_MAIN()
