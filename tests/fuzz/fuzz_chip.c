// SPDX-License-Identifier: MIT
/*
 * The chip read from a PROF_ folder in --output (config/chip.c,
 * chip_from_prof_dirs): --output may be writable by targets, so the
 * info.json there is anyone's text. The input becomes
 * <tmp>/PROF_.../host/info.json (first byte even) or
 * device_0/info.json.0 (odd) in a temporary folder of its own.
 *
 * What it promises: a chip found is a number 0-255, and `where` names
 * the folder, inside the buffer.
 */
#include <fcntl.h>
#include <ftw.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "config/chip.h"

#define PROF "PROF_000001_20261201000000000_12345678ABCDEFGH"

static struct {
	bool ready;
	char dir[64], host[160], device[160];
} env;

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void cleanup(void)
{
	nftw(env.dir, remove_one, 8, FTW_DEPTH | FTW_PHYS);
}

static void setup(void)
{
	char path[160];

	snprintf(env.dir, sizeof(env.dir), "/tmp/dynprof-fuzz-chip.XXXXXX");
	FUZZ_CHECK(mkdtemp(env.dir));
	atexit(cleanup);
	fuzz_cleanup_on_crash(cleanup);
	snprintf(path, sizeof(path), "%s/" PROF, env.dir);
	FUZZ_CHECK(mkdir(path, 0700) == 0);
	snprintf(path, sizeof(path), "%s/" PROF "/host", env.dir);
	FUZZ_CHECK(mkdir(path, 0700) == 0);
	snprintf(path, sizeof(path), "%s/" PROF "/device_0", env.dir);
	FUZZ_CHECK(mkdir(path, 0700) == 0);
	snprintf(env.host, sizeof(env.host), "%s/" PROF "/host/info.json", env.dir);
	snprintf(env.device, sizeof(env.device), "%s/" PROF "/device_0/info.json.0", env.dir);
	env.ready = true;
}

static void put(const char *path, const uint8_t *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	FUZZ_CHECK(fd >= 0);
	FUZZ_CHECK(write(fd, data, size) == (ssize_t)size);
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char where[128];
	int id = -1;

	if (size < 1)
		return 0;
	if (!env.ready)
		setup();
	unlink(env.host);
	unlink(env.device);
	put(data[0] & 1 ? env.device : env.host, data + 1, size - 1);
	if (chip_from_prof_dirs(env.dir, &id, where, sizeof(where)) == 0) {
		FUZZ_CHECK(id >= 0 && id <= 255);
		FUZZ_CHECK(fuzz_terminated(where, sizeof(where)));
		FUZZ_CHECK(!strncmp(where, env.dir, strlen(env.dir)));
	}
	return 0;
}
