// SPDX-License-Identifier: MIT
/*
 * Rootless podman's container from its conmon (model/conmon.c): the id in
 * conmon's argv; the owner of a user namespace this test makes.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model/conmon.h"
#include "unit.h"

#define ID "5645eea0f3d6ce5767e445aebf28e727a7a278a012eda9d5da0c449b19f3edc2"

/* argv as /proc/<pid>/cmdline has it: NUL after each argument. */
static int argv_id(const char *const *args, char *id, size_t len)
{
	char buf[1024];
	size_t n = 0;

	for (; *args; args++) {
		size_t k = strlen(*args) + 1;

		memcpy(buf + n, *args, k);
		n += k;
	}
	return conmon_argv_id(buf, n, id, len);
}

TEST(conmon_id_in_each_form)
{
	char id[65];

	CHECK_INT(argv_id((const char *[]){ "/usr/bin/conmon", "--api-version", "1", "-c", ID, "-u",
					    ID, "-n", "job", NULL },
			  id, sizeof(id)),
		  0);
	CHECK_STR(id, ID);
	CHECK_INT(argv_id((const char *[]){ "conmon", "--cid", ID, NULL }, id, sizeof(id)), 0);
	CHECK_INT(argv_id((const char *[]){ "conmon", "--cid=" ID, NULL }, id, sizeof(id)), 0);
	CHECK_INT(argv_id((const char *[]){ "conmon", "-c" ID, NULL }, id, sizeof(id)), 0);
	CHECK_STR(id, ID);
}

TEST(conmon_refuses_what_is_not_an_id_or_not_conmon)
{
	char id[65];

	CHECK_INT(argv_id((const char *[]){ "/usr/bin/conmonx", "-c", ID, NULL }, id, sizeof(id)),
		  -ENOENT);
	CHECK_INT(argv_id((const char *[]){ "sh", "-c", ID, NULL }, id, sizeof(id)), -ENOENT);
	CHECK_INT(argv_id((const char *[]){ "conmon", "-c", "trainjob", NULL }, id, sizeof(id)), -ENOENT);
	CHECK_STR(id, "");
	CHECK_INT(argv_id((const char *[]){ "conmon", "-c", NULL }, id, sizeof(id)), -ENOENT);
	CHECK_INT(argv_id((const char *[]){ "conmon", "-u", ID, NULL }, id, sizeof(id)), -ENOENT);
	CHECK_INT(argv_id((const char *[]){ "conmon", "-c", ID "0", NULL }, id, sizeof(id)), -ENOENT);
	CHECK_INT(conmon_argv_id("", 0, id, sizeof(id)), -ENOENT);
	/* The id does not fit: nothing. */
	CHECK_INT(argv_id((const char *[]){ "conmon", "-c", ID, NULL }, id, 64), -ENOENT);
}

TEST(userns_owner_of_a_namespace_this_test_makes)
{
	int pipefd[2], piddir;
	char path[64], c;
	pid_t pid;
	uid_t owner = 12345;

	piddir = open("/proc/self", O_PATH | O_DIRECTORY);
	REQUIRE(piddir >= 0);
	CHECK_INT(userns_owner(piddir, &owner), -ENOENT); /* our own namespace */
	close(piddir);
	REQUIRE(!pipe(pipefd));
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		/* As nobody, so the owner is not 0: a user's namespace. */
		close(pipefd[0]);
		if ((getuid() == 0 && setuid(65534)) || unshare(CLONE_NEWUSER))
			_exit(1);
		(void)!write(pipefd[1], "x", 1);
		pause();
		_exit(0);
	}
	close(pipefd[1]);
	if (read(pipefd[0], &c, 1) == 1) {
		snprintf(path, sizeof(path), "/proc/%d", (int)pid);
		piddir = open(path, O_PATH | O_DIRECTORY);
		REQUIRE(piddir >= 0);
		CHECK_INT(userns_owner(piddir, &owner), 0);
		CHECK_INT(owner, getuid() == 0 ? 65534 : getuid());
		close(piddir);
	} else {
		fprintf(stderr, "  (no user namespace here: not checked)\n");
	}
	close(pipefd[0]);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

UNIT_MAIN()
