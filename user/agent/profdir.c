// SPDX-License-Identifier: MIT
/* The PROF_ folder of a window (see profdir.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "agent/clockinfo.h"
#include "agent/config.h"
#include "agent/ctlfile.h"
#include "agent/hostinfo.h"
#include "agent/params.h"
#include "agent/profdir.h"
#include "agent/profname.h"
#include "shared/clock.h"
#include "shared/mkdirp.h"

#define PROFDIR_MODE 0750
#define PROF_INDEX 1 /* CANN numbers every window 000001 */
#define NAME_TRIES 4

static void random_bytes(unsigned char *buf, size_t len)
{
	/* Without entropy the name must still be made; the clock will do. */
	if (getrandom(buf, len, GRND_NONBLOCK) == (ssize_t)len)
		return;
	uint64_t ns = clock_mono_ns();

	for (size_t i = 0; i < len; i++)
		buf[i] = (unsigned char)((ns >> (i * 3)) ^ (uint64_t)(getpid() >> i));
}

/* Make dir/PROF_... with a fresh name (v1's without the pid); `out` gets its path. */
static int make_named_dir(const char *dir, int v1_name, char *out, size_t len)
{
	unsigned char rnd[PROFNAME_V1_RAND_LEN];
	char name[PROFNAME_LEN + 1];
	struct tm tm;
	int rc = -EEXIST;

	for (int i = 0; i < NAME_TRIES && rc == -EEXIST; i++) {
		int64_t us = clock_wall_us();
		time_t sec = (time_t)(us / 1000000);

		localtime_r(&sec, &tm);
		random_bytes(rnd, sizeof(rnd));
		if (v1_name)
			rc = profname_format_v1(name, sizeof(name), PROF_INDEX, &tm,
						(int)(us / 1000 % 1000), rnd);
		else
			rc = profname_format(name, sizeof(name), PROF_INDEX, &tm,
					     (int)(us / 1000 % 1000), (long)getpid(), rnd);
		if (rc < 0)
			return rc;
		if (snprintf(out, len, "%s/%s", dir, name) >= (int)len)
			return -ENAMETOOLONG;
		rc = mkdir(out, PROFDIR_MODE) < 0 ? -errno : 0;
	}
	if (rc)
		return rc;
	/* The mode is part of the layout; do not leave it to the umask. */
	return chmod(out, PROFDIR_MODE) < 0 ? -errno : 0;
}

static int make_subdir(const char *base, const char *sub)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/%s", base, sub) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	if (mkdir(path, PROFDIR_MODE) < 0)
		return -errno;
	return chmod(path, PROFDIR_MODE) < 0 ? -errno : 0;
}

static int host_dir(const struct profdir *pd, char *out, size_t len)
{
	return snprintf(out, len, "%s/host", pd->path) >= (int)len ? -ENAMETOOLONG : 0;
}

/* Write a malloc'd text as a control file, freeing it. */
static int write_owned(const char *dir, const char *name, char *text)
{
	int rc = text ? ctlfile_write(dir, name, text, strlen(text)) : -ENOMEM;

	free(text);
	return rc;
}

/*
 * The params as host/sample.json: msprof parses a folder for the devices its
 * sample.json names ("" gives nothing at all), and this one holds host data.
 * Params CANN's lenient parser took but that are no JSON object go as they
 * came (CANN writes them so; msprof could not read them either way). NULL:
 * out of memory.
 */
static char *host_sample_json(const char *params)
{
	cJSON *root = cJSON_Parse(params);
	char *text = NULL;

	if (!cJSON_IsObject(root)) {
		cJSON_Delete(root);
		return strdup(params);
	}
	cJSON_DeleteItemFromObjectCaseSensitive(root, "devices");
	if (cJSON_AddStringToObject(root, "devices", HOSTINFO_HOST_DEVICE))
		text = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	return text;
}

static int write_start_files(const char *host, const char *params, int chip)
{
	struct clock_stamp st;
	char log[256];
	int rc, n;

	clock_stamp_take(&st);
	rc = write_owned(host, "sample.json", host_sample_json(params));
	/* Not a CANN file: what the server ended up with, for tests and users to check. */
	if (!rc)
		rc = write_owned(host, PROFDIR_EFFECTIVE_PARAMS, agent_params_effective_json());
	if (!rc)
		rc = write_owned(host, "start_info", clock_stamp_info_json(&st, "Begin"));
	if (!rc) {
		n = clock_stamp_host_log(&st, log, sizeof(log));
		rc = n < 0 ? n : ctlfile_write(host, "host_start.log", log, (size_t)n);
	}
	if (!rc)
		rc = write_owned(host, "info.json", hostinfo_json(chip));
	return rc;
}

int profdir_open(struct profdir *pd, int v1_name, const char *params_json, int chip)
{
	char result_dir[PATH_MAX], host[PATH_MAX];
	int rc;

	/* As CANN, each START parses its connection's params into the kept set. */
	rc = agent_params_apply(v1_name ? PROTO_V1 : PROTO_V2, params_json);
	if (!rc)
		rc = agent_params_result_dir(result_dir, sizeof(result_dir));
	if (!rc)
		rc = mkdir_p(result_dir, PROFDIR_MODE); /* the client names it as this process sees it */
	if (!rc)
		rc = make_named_dir(result_dir, v1_name, pd->path, sizeof(pd->path));
	if (!rc)
		rc = make_subdir(pd->path, "host");
	if (!rc)
		rc = make_subdir(pd->path, "host/data");
	if (!rc)
		rc = host_dir(pd, host, sizeof(host));
	if (!rc)
		rc = write_start_files(host, params_json, chip);
	return rc;
}

int profdir_close(const struct profdir *pd)
{
	struct clock_stamp st;
	char host[PATH_MAX];
	int rc;

	clock_stamp_take(&st);
	rc = host_dir(pd, host, sizeof(host));
	if (!rc)
		rc = write_owned(host, "end_info", clock_stamp_info_json(&st, "End"));
	return rc;
}

int profdir_note(const struct profdir *pd, const char *name, const char *text)
{
	char path[PATH_MAX];
	size_t len = strlen(text);
	ssize_t n;
	int fd, rc = 0;

	if (snprintf(path, sizeof(path), "%s/host/%s", pd->path, name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, CTLFILE_MODE);
	if (fd < 0)
		return -errno;
	n = write(fd, text, len);
	if (n != (ssize_t)len)
		rc = n < 0 ? -errno : -EIO;
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	return rc;
}
