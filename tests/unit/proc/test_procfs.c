// SPDX-License-Identifier: MIT
/* procfs.c: status, environ, stat and passwd parsing. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <string.h>
#include <unistd.h>

#include "proc/procfs.h"
#include "unit.h"

/* ---- status ------------------------------------------------------------- */

static const char STATUS_NESTED[] = "Name:\tpython3\n"
				    "Umask:\t0022\n"
				    "State:\tS (sleeping)\n"
				    "Tgid:\t4242\n"
				    "Ngid:\t0\n"
				    "Pid:\t4242\n"
				    "PPid:\t4200\n"
				    "TracerPid:\t0\n"
				    "Uid:\t1001\t1002\t1003\t1004\n"
				    "Gid:\t100\t100\t100\t100\n"
				    "Groups:\t100 27 \n"
				    "NStgid:\t4242\t7\n"
				    "NSpid:\t4242\t7\n"
				    "NSpgid:\t4242\t7\n";

TEST(status_takes_real_uid_and_innermost_nspid)
{
	uid_t uid = 0;
	int nspid = 0;

	CHECK_INT(procfs_parse_status(STATUS_NESTED, &uid, &nspid), 0);
	CHECK_INT(uid, 1001);
	CHECK_INT(nspid, 7);
}

TEST(status_without_nspid_falls_back_to_pid)
{
	uid_t uid = 0;
	int nspid = 0;

	CHECK_INT(procfs_parse_status("Name:\tx\nPid:\t321\nPPid:\t1\nTracerPid:\t0\n"
				      "Uid:\t0\t0\t0\t0\n",
				      &uid, &nspid),
		  0);
	CHECK_INT(uid, 0);
	CHECK_INT(nspid, 321);
}

TEST(status_single_level_nspid_is_the_pid)
{
	uid_t uid = 5;
	int nspid = 0;

	CHECK_INT(procfs_parse_status("Pid:\t99\nUid:\t0\t0\t0\t0\nNSpid:\t99\n", &uid, &nspid), 0);
	CHECK_INT(uid, 0);
	CHECK_INT(nspid, 99);
}

TEST(status_ignores_ppid_and_tracerpid_lines)
{
	uid_t uid = 0;
	int nspid = 0;

	/* PPid: and TracerPid: come before Pid: in no kernel, but must not count. */
	CHECK_INT(procfs_parse_status("PPid:\t1\nTracerPid:\t2\nPid:\t3\nUid:\t4\t4\t4\t4\n", &uid, &nspid),
		  0);
	CHECK_INT(nspid, 3);
}

TEST(status_without_uid_is_invalid)
{
	uid_t uid;
	int nspid;

	CHECK_INT(procfs_parse_status("Pid:\t3\nNSpid:\t3\n", &uid, &nspid), -EINVAL);
	CHECK_INT(procfs_parse_status("", &uid, &nspid), -EINVAL);
}

/* Found by tests/fuzz/fuzz_procfs: a pid of 0 would name socket key 0. */
TEST(status_pid_zero_is_not_a_pid)
{
	uid_t uid;
	int nspid = -1;

	CHECK_INT(procfs_parse_status("Uid:\t0\nNSpid:\t00\nNSpid:\t7\n", &uid, &nspid), 0);
	CHECK_INT(nspid, 7);
	CHECK_INT(procfs_parse_status("Uid:\t0\nPid:\t0\n", &uid, &nspid), -EINVAL);
}

TEST(status_of_this_process_names_it)
{
	uid_t uid = 12345;
	int nspid = 0;

	CHECK_INT(procfs_read_status(getpid(), &uid, &nspid), 0);
	CHECK_INT(uid, getuid());
	CHECK(nspid > 0);
}

TEST(status_of_a_missing_process_is_esrch)
{
	uid_t uid;
	int nspid;

	CHECK_INT(procfs_read_status(0x3fffffff, &uid, &nspid), -ESRCH);
	CHECK_INT(procfs_read_status(-1, &uid, &nspid), -ESRCH);
}

/* ---- uid_map ------------------------------------------------------------ */

TEST(uid_map_identity_keeps_the_uid)
{
	uid_t inner = 1;

	CHECK_INT(procfs_parse_uid_map("         0          0 4294967295\n", 1001, &inner), 0);
	CHECK_INT(inner, 1001);
}

TEST(uid_map_translates_a_rootless_container_uid)
{
	uid_t inner = 99;

	/* podman-style: container root is host 100000, and 1..65535 follow. */
	CHECK_INT(procfs_parse_uid_map("0 100000 1\n1 100001 65535\n", 100000, &inner), 0);
	CHECK_INT(inner, 0);
	CHECK_INT(procfs_parse_uid_map("0 100000 1\n1 100001 65535\n", 101000, &inner), 0);
	CHECK_INT(inner, 1000);
}

TEST(uid_map_unmapped_uid_is_enoent)
{
	uid_t inner;

	CHECK_INT(procfs_parse_uid_map("0 100000 65536\n", 0, &inner), -ENOENT);
	CHECK_INT(procfs_parse_uid_map("0 100000 65536\n", 165536, &inner), -ENOENT);
	CHECK_INT(procfs_parse_uid_map("", 0, &inner), -ENOENT);
}

TEST(uid_map_of_this_process_maps_its_uid)
{
	uid_t inner = 12345;

	CHECK_INT(procfs_inner_uid(getpid(), getuid(), &inner), 0);
	CHECK_INT(inner, getuid());
}

/* ---- environ ------------------------------------------------------------ */

/* An environ block: entries each ending in NUL (sizeof - 1 drops the C NUL). */
static const char ENV[] = "DYNAMIC_PROFILING_KEY_PID_X=1\0"
			  "HOME=/root\0"
			  "DYNAMIC_PROFILING_KEY_PID=777\0"
			  "EMPTY=\0"
			  "LAST=end\0";
#define ENV_LEN (sizeof(ENV) - 1)

TEST(environ_finds_the_first_entry)
{
	char v[32];

	CHECK_INT(procfs_parse_environ(ENV, ENV_LEN, "DYNAMIC_PROFILING_KEY_PID_X", v, sizeof(v)), 0);
	CHECK_STR(v, "1");
}

TEST(environ_finds_the_last_entry)
{
	char v[32];

	CHECK_INT(procfs_parse_environ(ENV, ENV_LEN, "LAST", v, sizeof(v)), 0);
	CHECK_STR(v, "end");
}

TEST(environ_does_not_match_a_longer_name_with_the_same_prefix)
{
	char v[32];

	/* KEY must skip KEY_X=1 and find KEY=777. */
	CHECK_INT(procfs_parse_environ(ENV, ENV_LEN, "DYNAMIC_PROFILING_KEY_PID", v, sizeof(v)), 0);
	CHECK_STR(v, "777");
}

TEST(environ_does_not_match_a_shorter_name)
{
	char v[32];

	CHECK_INT(procfs_parse_environ(ENV, ENV_LEN, "HOM", v, sizeof(v)), -ENOENT);
	CHECK_INT(procfs_parse_environ(ENV, ENV_LEN, "HOME_", v, sizeof(v)), -ENOENT);
}

TEST(environ_absent_name_is_enoent)
{
	char v[32] = "junk";

	CHECK_INT(procfs_parse_environ(ENV, ENV_LEN, "ABSENT", v, sizeof(v)), -ENOENT);
	CHECK_STR(v, "");
}

TEST(environ_empty_value_is_set)
{
	char v[32] = "junk";

	CHECK_INT(procfs_parse_environ(ENV, ENV_LEN, "EMPTY", v, sizeof(v)), 0);
	CHECK_STR(v, "");
}

TEST(environ_first_of_duplicates_wins)
{
	static const char dup[] = "A=1\0A=2\0";
	char v[8];

	CHECK_INT(procfs_parse_environ(dup, sizeof(dup) - 1, "A", v, sizeof(v)), 0);
	CHECK_STR(v, "1");
}

TEST(environ_last_entry_without_nul_counts)
{
	static const char raw[] = { 'A', '=', '1', '\0', 'B', '=', '2', '3' };
	char v[8];

	CHECK_INT(procfs_parse_environ(raw, sizeof(raw), "B", v, sizeof(v)), 0);
	CHECK_STR(v, "23");
}

TEST(environ_value_too_long_is_erange)
{
	char v[3];

	CHECK_INT(procfs_parse_environ(ENV, ENV_LEN, "HOME", v, sizeof(v)), -ERANGE);
	CHECK_STR(v, "/r");
}

/* A real process's environ (a child given its own), several names read at once. */
TEST(environ_several_names_in_one_read_of_a_real_process)
{
	static char big[2 * 16384 + 16]; /* past one read's chunk (16 KiB): the scanners go on across reads */
	char *envp[] = { "PAD=1", big, "A=alpha", "B=", "C=a-long-value", NULL };
	char *argv[] = { "sleep", "5", NULL };
	char a[16], b[16], c[4], d[8];
	struct procfs_env_want w[] = { { "A", a, sizeof(a), 9 },
				       { "B", b, sizeof(b), 9 },
				       { "C", c, sizeof(c), 9 },
				       { "D", d, sizeof(d), 9 } };
	pid_t pid;
	int fd[2];

	memset(big, 'x', sizeof(big) - 1);
	memcpy(big, "BIG=", 4);
	REQUIRE(pipe(fd) == 0);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		close(fd[0]);
		fcntl(fd[1], F_SETFD, FD_CLOEXEC);
		execve("/bin/sleep", argv, envp);
		_exit(127);
	}
	close(fd[1]);
	/* The pipe's close says the exec happened (its end was close-on-exec). */
	CHECK(read(fd[0], a, 1) == 0);
	close(fd[0]);
	CHECK_INT(procfs_environ_get_many(pid, w, 4), 0);
	CHECK_INT(w[0].rc, 0);
	CHECK_STR(a, "alpha");
	CHECK_INT(w[1].rc, 0);
	CHECK_STR(b, "");
	CHECK_INT(w[2].rc, -ERANGE);
	CHECK_INT(w[3].rc, -ENOENT);
	CHECK_INT(procfs_environ_get(pid, "A", a, sizeof(a)), 0);
	CHECK_STR(a, "alpha");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	CHECK_INT(procfs_environ_get_many(pid, w, 0), -EINVAL);
}

TEST(environ_refuses_a_name_with_equals)
{
	char v[8];

	CHECK_INT(procfs_parse_environ(ENV, ENV_LEN, "HOME=", v, sizeof(v)), -EINVAL);
	CHECK_INT(procfs_parse_environ(ENV, ENV_LEN, "", v, sizeof(v)), -EINVAL);
}

TEST(environ_of_this_process_reads_its_startup_environment)
{
	char v[4096];

	/* PATH is in the environment of every test run; unsetting it later does not
	 * change /proc/self/environ, which is the block the process started with. */
	CHECK_INT(procfs_environ_get(getpid(), "PATH", v, sizeof(v)), 0);
	CHECK_INT(procfs_environ_get(getpid(), "DYNPROF_SURELY_UNSET_VARIABLE", v, sizeof(v)), -ENOENT);
}

/* ---- stat ---------------------------------------------------------------- */

TEST(stat_start_time_survives_parens_and_spaces_in_comm)
{
	/* comm "a) b (c" : the fields start after the LAST ')'. */
	static const char line[] =
		"4242 (a) b (c) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 "
		"987654321 1000 100 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
	unsigned long long start = 0;
	char state = 0;

	CHECK_INT(procfs_parse_stat(line, &state, &start), 0);
	CHECK_INT(state, 'S');
	CHECK(start == 987654321ULL);
}

TEST(stat_reads_a_zombie_state)
{
	static const char line[] = "7 (z) Z 1 7 7 0 -1 4 0 0 0 0 0 0 0 0 20 0 1 0 55 0 0\n";
	unsigned long long start = 0;
	char state = 0;

	CHECK_INT(procfs_parse_stat(line, &state, &start), 0);
	CHECK_INT(state, 'Z');
	CHECK(start == 55);
}

TEST(stat_too_short_is_invalid)
{
	unsigned long long start;

	CHECK_INT(procfs_parse_stat("1 (x) S 1 2 3\n", NULL, &start), -EINVAL);
	CHECK_INT(procfs_parse_stat("no paren here", NULL, &start), -EINVAL);
}

TEST(start_time_of_this_process_is_stable)
{
	unsigned long long a = 0, b = 1;

	CHECK_INT(procfs_start_time(getpid(), &a), 0);
	CHECK_INT(procfs_start_time(getpid(), &b), 0);
	CHECK(a == b);
	CHECK_INT(procfs_alive(getpid()), 1);
	CHECK_INT(procfs_alive(0x3fffffff), 0);
}

TEST(comm_of_a_missing_process_is_a_question_mark)
{
	char c[32];

	procfs_comm(0x3fffffff, c, sizeof(c));
	CHECK_STR(c, "?");
	procfs_comm(getpid(), c, sizeof(c));
	/* comm is the executable's name cut to 15 bytes, without a newline. */
	CHECK(strncmp(c, program_invocation_short_name, 15) == 0);
	CHECK(strchr(c, '\n') == NULL);
}

/* ---- passwd ---------------------------------------------------------------- */

static const char PASSWD[] = "# a comment line with 1001 in it: a:b:1001:1:x:/nowhere:/bin/sh\n"
			     "root:x:0:0:root:/:/bin/bash\n"
			     "\n"
			     "broken line without fields\n"
			     "short:x:1001:1\n"
			     "long:x:10010:10010::/home/long:/bin/sh\n"
			     "alice:x:1001:1001:Alice,,,:/home/alice/:/bin/bash\n"
			     "alias:x:1001:1001::/home/alias:/bin/sh\n"
			     "nohome:x:2000:2000:::/bin/sh\n"
			     "slashes:x:3000:3000::/srv/x///:/bin/sh\n"
			     "rootslashes:x:3001:3001::///:/bin/sh\n"
			     "crlf:x:3002:3002::/home/crlf:/bin/sh\r\n"
			     "last:x:4000:4000::/home/last:/bin/sh"; /* no final newline */

TEST(passwd_root_home_stays_slash)
{
	char h[64];

	CHECK_INT(passwd_parse_home(PASSWD, 0, h, sizeof(h)), 0);
	CHECK_STR(h, "/");
}

TEST(passwd_drops_trailing_slash)
{
	char h[64];

	CHECK_INT(passwd_parse_home(PASSWD, 1001, h, sizeof(h)), 0);
	CHECK_STR(h, "/home/alice");
	CHECK_INT(passwd_parse_home(PASSWD, 3000, h, sizeof(h)), 0);
	CHECK_STR(h, "/srv/x");
}

TEST(passwd_all_slashes_home_is_root)
{
	char h[64];

	CHECK_INT(passwd_parse_home(PASSWD, 3001, h, sizeof(h)), 0);
	CHECK_STR(h, "/");
}

TEST(passwd_skips_comments_and_malformed_lines)
{
	char h[64];

	/* The comment and the short line both mention 1001; alice's line wins. */
	CHECK_INT(passwd_parse_home(PASSWD, 1001, h, sizeof(h)), 0);
	CHECK_STR(h, "/home/alice");
}

TEST(passwd_uid_does_not_match_a_longer_number)
{
	char h[64];

	/* 10010 precedes 1001 and must not match it, nor 1001 match 100. */
	CHECK_INT(passwd_parse_home(PASSWD, 10010, h, sizeof(h)), 0);
	CHECK_STR(h, "/home/long");
	CHECK_INT(passwd_parse_home(PASSWD, 100, h, sizeof(h)), -ENOENT);
	CHECK_INT(passwd_parse_home(PASSWD, 10, h, sizeof(h)), -ENOENT);
}

TEST(passwd_first_match_wins)
{
	char h[64];

	CHECK_INT(passwd_parse_home(PASSWD, 1001, h, sizeof(h)), 0);
	CHECK(strcmp(h, "/home/alias") != 0);
}

TEST(passwd_unknown_uid_is_enoent)
{
	char h[64];

	CHECK_INT(passwd_parse_home(PASSWD, 5555, h, sizeof(h)), -ENOENT);
	CHECK_INT(passwd_parse_home("", 0, h, sizeof(h)), -ENOENT);
}

TEST(passwd_empty_home_is_enoent)
{
	char h[64];

	CHECK_INT(passwd_parse_home(PASSWD, 2000, h, sizeof(h)), -ENOENT);
}

TEST(passwd_strips_carriage_return_and_reads_last_line)
{
	char h[64];

	CHECK_INT(passwd_parse_home(PASSWD, 3002, h, sizeof(h)), 0);
	CHECK_STR(h, "/home/crlf");
	CHECK_INT(passwd_parse_home(PASSWD, 4000, h, sizeof(h)), 0);
	CHECK_STR(h, "/home/last");
}

TEST(passwd_home_too_long_is_enametoolong)
{
	char h[6];

	CHECK_INT(passwd_parse_home(PASSWD, 1001, h, sizeof(h)), -ENAMETOOLONG);
}

TEST(passwd_of_this_root_knows_root)
{
	char h[4096];

	CHECK_INT(passwd_home_in_root("/", 0, h, sizeof(h)), 0);
	CHECK(h[0] == '/');
	CHECK_INT(passwd_home_in_root("/nonexistent-root-folder", 0, h, sizeof(h)), -ENOENT);
}

TEST(passwd_uid_of_a_name_first_match_wins)
{
	uid_t u = 99;

	CHECK_INT(passwd_parse_uid(PASSWD, "root", &u), 0);
	CHECK_INT((int)u, 0);
	CHECK_INT(passwd_parse_uid(PASSWD, "alice", &u), 0);
	CHECK_INT((int)u, 1001);
	CHECK_INT(passwd_parse_uid(PASSWD, "crlf", &u), 0);
	CHECK_INT((int)u, 3002);
	CHECK_INT(passwd_parse_uid(PASSWD, "last", &u), 0);
	CHECK_INT((int)u, 4000);
	/* A prefix or an extension of a name is another name; a short line no entry. */
	CHECK_INT(passwd_parse_uid(PASSWD, "ali", &u), -ENOENT);
	CHECK_INT(passwd_parse_uid(PASSWD, "alicex", &u), -ENOENT);
	CHECK_INT(passwd_parse_uid(PASSWD, "short", &u), -ENOENT);
	CHECK_INT(passwd_parse_uid(PASSWD, "", &u), -EINVAL);
}

/* The names of a uid, as --user and user= take them: each name's first line decides. */
TEST(passwd_names_of_a_uid_are_those_whose_first_line_gives_it)
{
	static const char text[] = "alice:x:1001:1:::\n"
				   "bob:x:1002:1:::\n"
				   "alias:x:1001:1:::\n"
				   "bob:x:1001:1:::\n" /* bob's first line says 1002 */
				   "root:x:0:0:::\n";
	char names[64], tiny[8];

	CHECK_INT(passwd_parse_names(text, 1001, names, sizeof(names)), 0);
	CHECK_STR(names, ":alice:alias:");
	CHECK(passwd_names_have(names, "alice"));
	CHECK(passwd_names_have(names, "alias"));
	CHECK(!passwd_names_have(names, "bob"));
	CHECK(!passwd_names_have(names, "ali"));
	CHECK(!passwd_names_have(names, ""));
	CHECK_INT(passwd_parse_names(text, 7, names, sizeof(names)), -ENOENT);
	/* What does not fit is left out, whole. */
	CHECK_INT(passwd_parse_names(text, 1001, tiny, sizeof(tiny)), 0);
	CHECK_STR(tiny, ":alice:");
}

UNIT_MAIN()
