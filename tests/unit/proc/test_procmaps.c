// SPDX-License-Identifier: MIT
/*
 * A process's executable file mappings (proc/procmaps.c): the ioctl and
 * the text give the same files on a live process (this test's own, with
 * files it maps), and both stop where the caller says it knows enough. Its
 * lines are parsed by kernel/libmaps.c (test_libmaps).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "proc/procmaps.h"
#include "unit.h"

/* The paths a reader gave, one after another, each once; `calls` counts every call. */
struct seen {
	char text[8192];
	int calls, enough_at; /* enough_at: the call that answers "enough" (0: never) */
};

static bool note(const char *path, void *arg)
{
	struct seen *s = arg;
	char line[4200];

	snprintf(line, sizeof(line), "%s\n", path);
	if (!strstr(s->text, line) && strlen(s->text) + strlen(line) < sizeof(s->text))
		strcat(s->text, line);
	return ++s->calls != s->enough_at;
}

/* A file of `dir` named `name`, one page of it mapped with `prot` (left mapped: the test ends). */
static int map_file(const char *dir, const char *name, int prot, char *path, size_t len)
{
	int fd;
	void *p;

	snprintf(path, len, "%s/%s", dir, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || ftruncate(fd, 4096) < 0)
		return -1;
	p = mmap(NULL, 4096, prot, MAP_PRIVATE, fd, 0);
	close(fd);
	return p == MAP_FAILED ? -1 : 0;
}

TEST(the_ioctl_and_the_text_give_the_same_executable_files)
{
	char dir[] = "/tmp/dynprof-unit-procmaps.XXXXXX", code[256], data[256], gone[256];
	struct seen by_text = { .calls = 0 }, by_query = { .calls = 0 };
	int err;

	REQUIRE(mkdtemp(dir) != NULL);
	REQUIRE(map_file(dir, "libcode with space.so", PROT_READ | PROT_EXEC, code, sizeof(code)) == 0);
	REQUIRE(map_file(dir, "libdata.so", PROT_READ, data, sizeof(data)) == 0);
	REQUIRE(map_file(dir, "libgone.so", PROT_READ | PROT_EXEC, gone, sizeof(gone)) == 0);
	REQUIRE(unlink(gone) == 0); /* still mapped: " (deleted)" in the maps, dropped here */
	CHECK_INT(procmaps_exec_files_text(getpid(), note, &by_text), 0);
	err = procmaps_exec_files_query(getpid(), note, &by_query);
	if (err == -ENOTTY) {
		printf("  (this kernel has no PROCMAP_QUERY: the text alone checked)\n");
		memcpy(&by_query, &by_text, sizeof(by_query));
	} else {
		CHECK_INT(err, 0);
	}
	CHECK(strstr(by_text.text, code) != NULL);
	CHECK(strstr(by_text.text, gone) != NULL && !strstr(by_text.text, "(deleted)"));
	CHECK(strstr(by_text.text, data) == NULL); /* mapped, not executable */
	CHECK_STR(by_query.text, by_text.text);
	unlink(code);
	unlink(data);
	rmdir(dir);
}

/* Told "enough" at the second file, neither way reads a third (this process maps more than two). */
TEST(both_ways_stop_where_the_caller_knows_enough)
{
	struct seen all = { .calls = 0 }, by_text = { .enough_at = 2 }, by_query = { .enough_at = 2 };
	int err;

	CHECK_INT(procmaps_exec_files_text(getpid(), note, &all), 0);
	REQUIRE(all.calls > 2);
	CHECK_INT(procmaps_exec_files_text(getpid(), note, &by_text), 0);
	CHECK_INT(by_text.calls, 2);
	err = procmaps_exec_files_query(getpid(), note, &by_query);
	if (err == -ENOTTY) {
		printf("  (this kernel has no PROCMAP_QUERY: the text alone checked)\n");
		return;
	}
	CHECK_INT(err, 0);
	CHECK_INT(by_query.calls, 2);
	CHECK_STR(by_query.text, by_text.text);
}

TEST(a_gone_process_is_esrch_both_ways)
{
	struct seen s = { .calls = 0 };

	/* pid_max is at most 2^22: no process has this pid. */
	CHECK_INT(procmaps_exec_files_text(1 << 23, note, &s), -ESRCH);
	CHECK_INT(procmaps_exec_files(1 << 23, note, &s), -ESRCH);
}

UNIT_MAIN()
