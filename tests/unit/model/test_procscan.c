// SPDX-License-Identifier: MIT
/*
 * procscan's pure parts (model/procscan.c): status and stat fields, argv
 * joining, start times in clock ticks (checked against /proc/self/stat).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "model/procmodel.h"
#include "model/procscan.h"
#include "unit.h"

TEST(status_chain_and_ppid)
{
	int ppid = -1, ns[PM_MAX_NS], n = 0;

	CHECK_INT(procscan_parse_status("Name:\tbash\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t100\n"
					"Ngid:\t0\nPid:\t100\nPPid:\t42\nTracerPid:\t0\n"
					"NSpid:\t100\t5\t1\nNSpgid:\t100\t5\t1\n",
					&ppid, ns, PM_MAX_NS, &n),
		  0);
	CHECK_INT(ppid, 42);
	CHECK_INT(n, 3);
	CHECK_INT(ns[0], 100);
	CHECK_INT(ns[1], 5);
	CHECK_INT(ns[2], 1);
}

TEST(status_without_nspid_uses_pid)
{
	int ppid = -1, ns[PM_MAX_NS], n = 0;

	CHECK_INT(procscan_parse_status("Pid:\t77\nPPid:\t1\n", &ppid, ns, PM_MAX_NS, &n), 0);
	CHECK_INT(n, 1);
	CHECK_INT(ns[0], 77);
	CHECK_INT(procscan_parse_status("Pid:\t77\n", &ppid, ns, PM_MAX_NS, &n), -EINVAL);
	CHECK_INT(procscan_parse_status("PPid:\t1\nNSpid:\tx\n", &ppid, ns, PM_MAX_NS, &n), -EINVAL);
}

TEST(status_deep_chain_keeps_host_and_innermost)
{
	int ppid, ns[3], n = 0;

	CHECK_INT(procscan_parse_status("PPid:\t0\nNSpid:\t1\t2\t3\t4\t5\n", &ppid, ns, 3, &n), 0);
	CHECK_INT(n, 3);
	CHECK_INT(ns[0], 1);
	CHECK_INT(ns[1], 2);
	CHECK_INT(ns[2], 5);
}

TEST(stat_comm_with_parentheses)
{
	char comm[16];

	CHECK_INT(procscan_parse_comm("123 (a) b)) S 1 123 123 0 -1", comm, sizeof(comm)), 0);
	CHECK_STR(comm, "a) b)");
	CHECK_INT(procscan_parse_comm("123 (python3) R 1", comm, sizeof(comm)), 0);
	CHECK_STR(comm, "python3");
	CHECK_INT(procscan_parse_comm("123 python3 R 1", comm, sizeof(comm)), -EINVAL);
}

static const char *joined(const char *buf, size_t len, size_t outlen)
{
	static char out[64];

	procscan_join_args(buf, len, out, outlen);
	return out;
}

TEST(argv_joined_by_spaces)
{
	static const char argv[] = "python3\0train.py\0--epochs\0003\0";

	CHECK_STR(joined(argv, sizeof(argv) - 1, 64), "python3 train.py --epochs 3");
	CHECK_STR(joined("a\0\0b", 4, 64), "a  b");        /* an empty argument */
	CHECK_STR(joined("sleep\0001", 7, 64), "sleep 1"); /* no trailing NUL */
	CHECK_STR(joined("", 0, 64), "");
	CHECK_STR(joined("\0\0\0", 3, 64), "");
}

TEST(argv_cut_and_made_printable)
{
	CHECK_STR(joined("abcdef\0ghi", 10, 8), "abcdef ");
	CHECK_STR(joined("abc", 3, 1), "");
	CHECK_STR(joined("a\nb\tc\x7f", 6, 64), "a?b?c?");
	CHECK_STR(joined("caf\xc3\xa9", 5, 64), "caf\xc3\xa9"); /* UTF-8 kept */
}

TEST(start_ns_to_clock_ticks)
{
	CHECK_INT(procscan_ns_to_ticks(1234567890123ULL, 100), 123456);
	CHECK_INT(procscan_ns_to_ticks(9999999ULL, 100), 0);
	CHECK_INT(procscan_ns_to_ticks(10000000ULL, 100), 1);
	CHECK_INT(procscan_ns_to_ticks(1234567890123ULL, 1000), 1234567);
	CHECK_INT(procscan_ns_to_ticks(1234567890123ULL, 250), 308641);
	CHECK_INT(procscan_ns_to_ticks(1234567890123ULL, 0), 0);
}

/* The same number /proc shows for this very process. */
TEST(start_ticks_match_proc)
{
	struct timespec now;
	unsigned long long start, boot_ns;
	char buf[4096];
	FILE *f = fopen("/proc/self/stat", "r");
	char *p;

	REQUIRE(f != NULL);
	CHECK(fgets(buf, sizeof(buf), f) != NULL);
	fclose(f);
	p = strrchr(buf, ')');
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	REQUIRE(p != NULL);
	start = strtoull(p + 1, NULL, 10);
	clock_gettime(CLOCK_BOOTTIME, &now);
	boot_ns = (unsigned long long)now.tv_sec * 1000000000ULL + (unsigned long long)now.tv_nsec;
	/* This process started before now, and not long before. */
	CHECK(start <= procscan_ns_to_ticks(boot_ns, sysconf(_SC_CLK_TCK)));
	CHECK(start + 100 * 60 >= procscan_ns_to_ticks(boot_ns, sysconf(_SC_CLK_TCK)));
}

UNIT_MAIN()
