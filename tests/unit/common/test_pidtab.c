// SPDX-License-Identifier: MIT
/* The pid table (common/pidtab.c) under churn. */
#include <errno.h>

#include "common/pidtab.h"
#include "unit.h"

TEST(pidtab_survives_churn)
{
	static char vals[5000];
	struct pidtab t;
	int ok = 1;

	pidtab_init(&t);
	for (int i = 0; i < 5000; i++)
		CHECK_INT(pidtab_put(&t, 1 + i * 7, &vals[i]), 0);
	CHECK_INT(t.count, 5000);
	for (int i = 0; i < 5000; i += 2)
		ok &= pidtab_del(&t, 1 + i * 7) == &vals[i];
	for (int i = 0; i < 5000; i++)
		ok &= pidtab_get(&t, 1 + i * 7) == (i % 2 ? &vals[i] : NULL);
	CHECK(ok);
	CHECK_INT(t.count, 2500);
	CHECK(pidtab_del(&t, 3) == NULL);
	CHECK(pidtab_get(&t, 0) == NULL);
	CHECK_INT(pidtab_put(&t, 0, vals), -EINVAL);
	CHECK_INT(pidtab_put(&t, 8, &vals[0]), 0); /* replace */
	CHECK(pidtab_get(&t, 8) == &vals[0]);
	CHECK_INT(t.count, 2500);
	pidtab_free(&t);
}

UNIT_MAIN()
