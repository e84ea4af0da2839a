// SPDX-License-Identifier: MIT
/*
 * Rows of /proc/net/unix (sock/netunix.c): each socket state, paths with
 * blanks, abstract names, junk; and netunix_find over a fake net/unix file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sock/netunix.h"
#include "unit.h"

static int row(const char *line, struct netunix_row *r)
{
	return netunix_parse_row(line, strlen(line), r);
}

TEST(netunix_listening_row)
{
	struct netunix_row r;

	CHECK_INT(row("0000000000000000: 00000002 00000000 00010000 0001 01 23456 "
		      "/root/dynamic_profiling_socket_42",
		      &r),
		  0);
	CHECK_INT(r.flags, 0x10000);
	CHECK_INT(r.type, 1);
	CHECK_INT(r.state, NETUNIX_SS_UNCONNECTED);
	CHECK_INT(r.inode, 23456);
	CHECK_INT(r.path_len, strlen("/root/dynamic_profiling_socket_42"));
	CHECK(!memcmp(r.path, "/root/dynamic_profiling_socket_42", r.path_len));
	CHECK(netunix_is_listener(&r));
}

TEST(netunix_accepted_row_has_the_listener_path)
{
	struct netunix_row r;

	CHECK_INT(row("ffff8881a2b3c400: 00000003 00000000 00000000 0001 03 23460 /root/s", &r), 0);
	CHECK_INT(r.state, NETUNIX_SS_CONNECTED);
	CHECK_INT(r.inode, 23460);
	CHECK_INT(r.path_len, 7);
	CHECK(!netunix_is_listener(&r));
}

TEST(netunix_unbound_row_has_no_path)
{
	struct netunix_row r;

	/* %5lu pads the inode with blanks. */
	CHECK_INT(row("00000000e130848b: 00000003 00000000 00000000 0001 03   546", &r), 0);
	CHECK_INT(r.inode, 546);
	CHECK_INT(r.path_len, 0);
	CHECK_STR(r.path, "");
}

TEST(netunix_paths_with_blanks_and_abstract_names)
{
	struct netunix_row r;

	CHECK_INT(row("0000000000000000: 00000002 00000000 00010000 0001 01   123 /tmp/a b ", &r), 0);
	CHECK_INT(r.path_len, 9);
	CHECK(!memcmp(r.path, "/tmp/a b ", 9));
	CHECK_INT(row("0000000000000000: 00000002 00000000 00010000 0005 01 77 @abstract", &r), 0);
	CHECK_INT(r.type, 5);
	CHECK(r.path_len == 9 && !memcmp(r.path, "@abstract", 9));
}

TEST(netunix_queued_client_is_connecting)
{
	struct netunix_row r;

	CHECK_INT(row("0000000000000000: 00000002 00000000 00000000 0001 02     0 /root/s", &r), 0);
	CHECK_INT(r.state, NETUNIX_SS_CONNECTING);
	CHECK_INT(r.inode, 0);
	CHECK(!netunix_is_listener(&r));
}

TEST(netunix_rejects_header_and_junk)
{
	struct netunix_row r;

	CHECK_INT(row("Num       RefCount Protocol Flags    Type St Inode Path", &r), -EINVAL);
	CHECK_INT(row("", &r), -EINVAL);
	CHECK_INT(row("0000000000000000: 00000002 00000000 00010000 0001", &r), -EINVAL);
	CHECK_INT(row("0000000000000000 00000002 00000000 00010000 0001 01 1 /p", &r), -EINVAL);
	CHECK_INT(row("0000000000000000: 00000002 00000000 00010000 0001 01 12x /p", &r), -EINVAL);
	CHECK_INT(row("0000000000000000: 00000002 00000000 00010000 0001 01 12 ", &r), -EINVAL);
}

TEST(netunix_row_needs_no_nul)
{
	const char text[] = "0000000000000000: 00000002 00000000 00010000 0001 01 9 /p\nNEXT";
	struct netunix_row r;

	CHECK_INT(netunix_parse_row(text, (size_t)(strchr(text, '\n') - text), &r), 0);
	CHECK(r.path_len == 2 && !memcmp(r.path, "/p", 2));
}

TEST(netunix_abstract_key_of_cann_85_rows)
{
	struct netunix_row r;
	const char *key;
	size_t klen;

	CHECK_INT(row("0000000000000000: 00000002 00000000 00010000 0001 01 1125838 @dyn_prof_sock_9094",
		      &r),
		  0);
	CHECK(netunix_is_listener(&r));
	CHECK_INT(netunix_abstract_key(&r, "dyn_prof_sock_", &key, &klen), 0);
	CHECK(klen == 4 && !memcmp(key, "9094", 4));
	/* The key as CANN wrote it: raw environment text, leading zeros kept. */
	CHECK_INT(row("0000000000000000: 00000002 00000000 00010000 0001 01 5 @dyn_prof_sock_0777", &r),
		  0);
	CHECK_INT(netunix_abstract_key(&r, "dyn_prof_sock_", &key, &klen), 0);
	CHECK(klen == 4 && !memcmp(key, "0777", 4));
	/* An accepted socket carries the listener's name too (not a listener). */
	CHECK_INT(row("0000000000000000: 00000002 00000000 00000000 0001 03 1127029 @dyn_prof_sock_9094",
		      &r),
		  0);
	CHECK(!netunix_is_listener(&r));
	CHECK_INT(netunix_abstract_key(&r, "dyn_prof_sock_", &key, &klen), 0);
}

TEST(netunix_abstract_key_refuses_other_names)
{
	struct netunix_row r;
	const char *key;
	size_t klen;

	/* A file of the same name, no key, a padded name (NULs shown as '@'), too long. */
	CHECK_INT(row("0000000000000000: 00000002 00000000 00010000 0001 01 5 /root/dyn_prof_sock_1", &r),
		  0);
	CHECK_INT(netunix_abstract_key(&r, "dyn_prof_sock_", &key, &klen), -EINVAL);
	CHECK_INT(row("0000000000000000: 00000002 00000000 00010000 0001 01 5 @dyn_prof_sock_", &r), 0);
	CHECK_INT(netunix_abstract_key(&r, "dyn_prof_sock_", &key, &klen), -EINVAL);
	CHECK_INT(row("0000000000000000: 00000002 00000000 00010000 0001 01 5 @dyn_prof_sock_12@@@@", &r),
		  0);
	CHECK_INT(netunix_abstract_key(&r, "dyn_prof_sock_", &key, &klen), -EINVAL);
	CHECK_INT(row("0000000000000000: 00000002 00000000 00010000 0001 01 5 @dyn_prof_sock_12345678901234567",
		      &r),
		  0);
	CHECK_INT(netunix_abstract_key(&r, "dyn_prof_sock_", &key, &klen), -EINVAL);
	CHECK_INT(row("0000000000000000: 00000002 00000000 00010000 0001 01 5 @dynamic_profiling_socket_1",
		      &r),
		  0);
	CHECK_INT(netunix_abstract_key(&r, "dyn_prof_sock_", &key, &klen), -EINVAL);
	CHECK_INT(row("0000000000000000: 00000002 00000000 00010000 0001 01 5 @dyn_prof_sock_1 2", &r), 0);
	CHECK_INT(netunix_abstract_key(&r, "dyn_prof_sock_", &key, &klen), -EINVAL);
}

/* netunix_find reads "net/unix" under any folder: a fake one, across chunk boundaries. */
TEST(netunix_find_collects_inodes_of_one_path)
{
	char dir[] = "/tmp/dynprof-netunix-XXXXXX", sub[64], file[80], line[600];
	struct netunix_match m;
	FILE *f;
	int dfd;

	REQUIRE(mkdtemp(dir) != NULL);
	snprintf(sub, sizeof(sub), "%s/net", dir);
	snprintf(file, sizeof(file), "%s/unix", sub);
	REQUIRE(mkdir(sub, 0700) == 0);
	f = fopen(file, "w");
	REQUIRE(f != NULL);
	fprintf(f, "Num       RefCount Protocol Flags    Type St Inode Path\n");
	for (int i = 0; i < 2000; i++) /* ~150 KiB: many reads */
		fprintf(f, "0000000000000000: 00000002 00000000 00010000 0001 01 %5d /run/other/%d\n",
			1000 + i, i);
	memset(line, 'x', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\0';
	fprintf(f, "0000000000000000: 00000002 00000000 00010000 0001 01 5 /root/s%s\n", line);
	fprintf(f, "0000000000000000: 00000002 00000000 00010000 0001 01 71 /root/s\n");
	fprintf(f, "0000000000000000: 00000003 00000000 00000000 0001 03 72 /root/s\n");
	fprintf(f, "0000000000000000: 00000002 00000000 00000000 0001 02     0 /root/s\n");
	fprintf(f, "0000000000000000: 00000003 00000000 00000000 0001 03 73\n");
	fprintf(f, "0000000000000000: 00000002 00000000 00010000 0001 01 74 /root/s2\n");
	fclose(f);
	dfd = open(dir, O_PATH | O_DIRECTORY);
	REQUIRE(dfd >= 0);
	CHECK_INT(netunix_find(dfd, "/root/s", &m), 0);
	CHECK_INT(m.nlistening, 1);
	CHECK_INT(m.listening[0], 71);
	CHECK_INT(m.nconnected, 1);
	CHECK_INT(m.connected[0], 72);
	CHECK_INT(netunix_find(dfd, "/run/other/1999", &m), 0);
	CHECK_INT(m.nlistening, 1);
	CHECK_INT(m.listening[0], 2999);
	close(dfd);
	unlink(file);
	rmdir(sub);
	rmdir(dir);
}

UNIT_MAIN()
