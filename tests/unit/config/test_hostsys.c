// SPDX-License-Identifier: MIT
/* --host-sys: what dynprof keeps for itself and what goes on to CANN. */
#include "config/hostsys.h"
#include "unit.h"

TEST(own_items_are_osrt_cpu_mem_disk_network)
{
	CHECK(hostsys_own("osrt,cpu,mem,disk,network") == HOSTSYS_OWN);
	CHECK(hostsys_own("disk,network,numa") == (HOSTSYS_DISK | HOSTSYS_NET));
	CHECK(hostsys_own("numa") == 0);
	CHECK(hostsys_own("disks,net") == 0);
	CHECK(hostsys_own("cpu") == HOSTSYS_CPU);
	CHECK(hostsys_own("cpux,osr") == 0);
	CHECK(hostsys_own(NULL) == 0);
}

TEST(cann_gets_the_rest_in_order)
{
	char out[64];

	hostsys_for_cann("cpu,disk,osrt,numa,mem,network", out, sizeof(out));
	CHECK_STR(out, "numa");
	hostsys_for_cann("osrt,cpu,mem,disk,network", out, sizeof(out));
	CHECK_STR(out, "");
	hostsys_for_cann(NULL, out, sizeof(out));
	CHECK_STR(out, "");
	hostsys_for_cann("numa,future1", out, 8); /* truncated: only whole items */
	CHECK_STR(out, "numa");
}

UNIT_MAIN()
