// SPDX-License-Identifier: MIT
/*
 * elfsym.c on real files: this test program and the C library it runs
 * with. Each offset found is checked two ways that do not use the symbol
 * tables: the file's bytes at the offset are the code in memory, and the
 * mapping holding the code puts it at that offset of the file.
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel/elfsym.h"
#include "kernel/libmaps.h"
#include "unit.h"

#define CODE_BYTES 16

int unit_elfsym_target(int x);

/* Exported and never inlined: a function with its own code in this file. */
__attribute__((visibility("default"), noinline)) int unit_elfsym_target(int x)
{
	__asm__ volatile("" ::: "memory");
	return x * 3 + 1;
}

/* Not a function: must not be taken for one. */
__attribute__((visibility("default"))) int unit_elfsym_data = 42;

static void self_path(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);

	buf[n > 0 ? n : 0] = '\0';
}

/* Do the file's bytes at `offset` equal the code at `code`? */
static int file_holds_code(const char *path, uint64_t offset, const void *code)
{
	unsigned char buf[CODE_BYTES];
	FILE *f = fopen(path, "rb");
	size_t got;

	if (!f)
		return 0;
	got = fseeko(f, (off_t)offset, SEEK_SET) == 0 ? fread(buf, 1, sizeof(buf), f) : 0;
	fclose(f);
	return got == sizeof(buf) && memcmp(buf, code, sizeof(buf)) == 0;
}

/* The file offset of `addr` by the mapping that holds it; -1 when none does. */
static int64_t offset_from_maps(const void *addr)
{
	uintptr_t a = (uintptr_t)addr;
	unsigned long long start, end, off;
	int64_t found = -1;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && found < 0 && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx %*s %llx", &start, &end, &off) == 3 && a >= start && a < end)
			found = (int64_t)(a - start + off);
	if (f)
		fclose(f);
	return found;
}

TEST(own_function_offset_is_its_code)
{
	char exe[PATH_MAX], err[256] = "";
	struct elfsym s;

	self_path(exe, sizeof(exe));
	CHECK_INT(elfsym_find(exe, "unit_elfsym_target", &s, err, sizeof(err)), 0);
	CHECK(s.addr != 0);
	CHECK(file_holds_code(exe, s.offset, (const void *)unit_elfsym_target));
	CHECK_INT((int64_t)s.offset, offset_from_maps((const void *)unit_elfsym_target));
	CHECK_INT(unit_elfsym_target(1), 4);
}

TEST(libc_malloc_offset_is_its_code)
{
	struct libmaps_hit *hit = calloc(1, sizeof(*hit));
	char err[256] = "";
	struct elfsym s = { 0 };
	void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
	void *code = libc ? dlsym(libc, "malloc") : NULL; /* libc's own, not an interposer's */

	CHECK(hit && code);
	if (!hit || !code)
		goto out;
	CHECK_INT(libmaps_find(getpid(), "libc.so.6", hit), 0);
	CHECK_INT(elfsym_find(hit->path, "malloc", &s, err, sizeof(err)), 0);
	CHECK(s.dynamic);
	CHECK(file_holds_code(hit->path, s.offset, code));
	CHECK_INT((int64_t)s.offset, offset_from_maps(code));
out:
	if (libc)
		dlclose(libc);
	free(hit);
}

TEST(ifunc_is_refused_not_replaced_by_an_old_version)
{
	struct libmaps_hit *hit = calloc(1, sizeof(*hit));
	char err[256] = "";
	struct elfsym s;

	REQUIRE(hit != NULL);
	CHECK_INT(libmaps_find(getpid(), "libc.so.6", hit), 0);
	/* memcpy@@GLIBC_2.14 is an IFUNC; memcpy@GLIBC_2.2.5 a plain function. */
	CHECK_INT(elfsym_find(hit->path, "memcpy", &s, err, sizeof(err)), -ENOTSUP);
	CHECK(strstr(err, "IFUNC") != NULL);
	free(hit);
}

TEST(missing_symbol_and_non_functions_are_enoent)
{
	char exe[PATH_MAX], err[256] = "";
	struct elfsym s;

	self_path(exe, sizeof(exe));
	CHECK_INT(elfsym_find(exe, "no_such_function_here", &s, err, sizeof(err)), -ENOENT);
	CHECK(strstr(err, "no function no_such_function_here in ") == err);
	CHECK(strchr(err, '\n') == NULL);
	CHECK_INT(elfsym_find(exe, "unit_elfsym_data", &s, err, sizeof(err)), -ENOENT);
	/* A prefix of a real name is not that name. */
	CHECK_INT(elfsym_find(exe, "unit_elfsym_targ", &s, err, sizeof(err)), -ENOENT);
}

TEST(missing_file_is_enoent)
{
	char err[256] = "";
	struct elfsym s;

	CHECK_INT(elfsym_find("/nonexistent/libnothing.so", "f", &s, err, sizeof(err)), -ENOENT);
	CHECK_STR(err, "/nonexistent/libnothing.so: No such file or directory");
}

TEST(non_elf_file_is_enoexec)
{
	char path[] = "/tmp/unit_elfsym.XXXXXX", err[256] = "";
	struct elfsym s;
	int fd = mkstemp(path);

	REQUIRE(fd >= 0);
	CHECK(write(fd, "#!/bin/sh\necho not elf\n", 23) == 23);
	close(fd);
	CHECK_INT(elfsym_find(path, "main", &s, err, sizeof(err)), -ENOEXEC);
	CHECK(strstr(err, ": not an ELF file") != NULL);
	/* An empty file, and a folder, are no ELF files either. */
	CHECK_INT(truncate(path, 0), 0);
	CHECK_INT(elfsym_find(path, "main", &s, err, sizeof(err)), -ENOEXEC);
	CHECK_INT(elfsym_find("/tmp", "main", &s, err, sizeof(err)), -ENOEXEC);
	unlink(path);
}

/* The path may be in a target's filesystem: a FIFO there must not hang the lookup. */
TEST(fifo_is_refused_without_blocking)
{
	char dir[] = "/tmp/unit_elfsym.XXXXXX", path[64], err[256] = "";
	struct elfsym s;

	REQUIRE(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/lib.so", dir);
	REQUIRE(mkfifo(path, 0600) == 0);
	CHECK_INT(elfsym_find(path, "f", &s, err, sizeof(err)), -ENOEXEC);
	CHECK(strstr(err, ": not a regular file") != NULL);
	unlink(path);
	rmdir(dir);
}

/* The first bytes kept for probe placement are the function's own code. */
TEST(function_start_bytes_come_with_the_offset)
{
	char exe[PATH_MAX], err[256] = "";
	struct elfsym s;

	self_path(exe, sizeof(exe));
	REQUIRE(elfsym_find(exe, "unit_elfsym_target", &s, err, sizeof(err)) == 0);
	CHECK(s.code_len > 0 && s.code_len <= sizeof(s.code));
	CHECK(!memcmp(s.code, (const void *)unit_elfsym_target, s.code_len));
}

UNIT_MAIN()
