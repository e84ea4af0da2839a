// SPDX-License-Identifier: MIT
/* profhost.h: the host part of a window's PROF_ folder. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "shared/clock.h"
#include "shared/clockinfo.h"
#include "shared/ctlfile.h"
#include "shared/hostinfo.h"
#include "shared/profhost.h"
#include "shared/profname.h"

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
static int make_named_dir(const char *dir, const struct profhost_desc *d, char *out, size_t len)
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
		if (d->v1_name)
			rc = profname_format_v1(name, sizeof(name), PROF_INDEX, &tm,
						(int)(us / 1000 % 1000), rnd);
		else
			rc = profname_format(name, sizeof(name), PROF_INDEX, &tm,
					     (int)(us / 1000 % 1000), d->pid, rnd);
		if (rc < 0)
			return rc;
		if (snprintf(out, len, "%s/%s", dir, name) >= (int)len)
			return -ENAMETOOLONG;
		rc = mkdir(out, PROFHOST_MODE) < 0 ? -errno : 0;
	}
	if (rc)
		return rc;
	/* The mode is part of the layout; do not leave it to the umask. */
	return chmod(out, PROFHOST_MODE) < 0 ? -errno : 0;
}

static int make_subdir(const char *base, const char *sub)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/%s", base, sub) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	if (mkdir(path, PROFHOST_MODE) < 0)
		return -errno;
	return chmod(path, PROFHOST_MODE) < 0 ? -errno : 0;
}

char *profhost_sample_json(const char *params)
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

int profhost_write(const struct profhost *ph, const char *name, char *text)
{
	char host[PATH_MAX];
	int rc = text ? 0 : -ENOMEM;

	if (!rc && snprintf(host, sizeof(host), "%s/host", ph->path) >= (int)sizeof(host))
		rc = -ENAMETOOLONG;
	if (!rc)
		rc = ctlfile_write(host, name, text, strlen(text));
	free(text);
	return rc;
}

static int write_start_files(const struct profhost *ph, const struct profhost_desc *d)
{
	struct clock_stamp st;
	char log[256];
	int rc, n;

	clock_stamp_take(&st);
	rc = profhost_write(ph, "sample.json", strdup(d->sample));
	if (!rc)
		rc = profhost_write(ph, "start_info", clock_stamp_info_json(&st, "Begin"));
	if (!rc) {
		n = clock_stamp_host_log(&st, log, sizeof(log));
		rc = n < 0 ? n : profhost_write(ph, "host_start.log", strndup(log, (size_t)n));
	}
	if (!rc)
		rc = profhost_write(ph, "info.json", hostinfo_json(d->chip, d->pid, d->net_dev));
	return rc;
}

int profhost_open(struct profhost *ph, const char *dir, const struct profhost_desc *d)
{
	int rc = make_named_dir(dir, d, ph->path, sizeof(ph->path));

	if (!rc)
		rc = make_subdir(ph->path, "host");
	if (!rc)
		rc = make_subdir(ph->path, "host/data");
	if (!rc)
		rc = write_start_files(ph, d);
	return rc;
}

int profhost_close(const struct profhost *ph)
{
	struct clock_stamp st;

	clock_stamp_take(&st);
	return profhost_write(ph, "end_info", clock_stamp_info_json(&st, "End"));
}
