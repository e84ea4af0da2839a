// SPDX-License-Identifier: MIT
/* Socket inodes from fd link text (proc/fdscan.c). */
#include "proc/fdscan.h"
#include "unit.h"

TEST(fdscan_socket_inodes)
{
	CHECK_INT(fdscan_socket_inode("socket:[123]"), 123);
	CHECK_INT(fdscan_socket_inode("socket:[12"), 0);
	CHECK_INT(fdscan_socket_inode("socket:[12]x"), 0);
	CHECK_INT(fdscan_socket_inode("pipe:[123]"), 0);
	CHECK_INT(fdscan_socket_inode("/dev/davinci0"), 0);
}

UNIT_MAIN()
