// SPDX-License-Identifier: MIT
/* Which chip the targets run on (see chip.h). */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/rootfile.h"
#include "config/chip.h"
#include "proc/procfs.h"
#include "shared/decimal.h"

#define MODULE_TYPE_SYSTEM 0 /* ascend_hal.h DEV_MODULE_TYPE */
#define INFO_TYPE_VERSION 1  /* ascend_hal.h DEV_INFO_TYPE */
#define INFO_JSON_MAX (1 << 20)

typedef int (*hal_get_device_info_fn)(uint32_t dev, int32_t module, int32_t info, int64_t *value);

/* The Driver_Install_Path_Param= value of the install info file. */
static int driver_path(const char *install_info, char *out, size_t len)
{
	char line[PATH_MAX + 64];
	FILE *f = fopen(install_info, "re");
	int rc = -ENOENT;

	if (!f)
		return -ENOENT;
	while (fgets(line, sizeof(line), f)) {
		static const char key[] = "Driver_Install_Path_Param=";

		if (strncmp(line, key, sizeof(key) - 1))
			continue;
		line[strcspn(line, "\r\n")] = '\0';
		if ((size_t)snprintf(out, len, "%s", line + sizeof(key) - 1) < len && out[0] == '/')
			rc = 0;
		break;
	}
	fclose(f);
	return rc;
}

/* Loaded code must be owned by root or us and writable by nobody else. */
static bool trusted_file(const char *path)
{
	struct stat st;

	return !lstat(path, &st) && S_ISREG(st.st_mode) &&
	       (st.st_uid == 0 || st.st_uid == geteuid()) && !(st.st_mode & (S_IWGRP | S_IWOTH));
}

static int call_driver(const char *lib, int *id, char *why, size_t len)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	hal_get_device_info_fn fn;
	int64_t v = 0;
	int rc;

	if (!h) {
		snprintf(why, len, "%s does not load: %s", lib, dlerror());
		return -ENOENT;
	}
	fn = (hal_get_device_info_fn)dlsym(h, "halGetDeviceInfo");
	if (!fn) {
		snprintf(why, len, "%s has no halGetDeviceInfo", lib);
		dlclose(h);
		return -ENOSYS;
	}
	rc = fn(0, MODULE_TYPE_SYSTEM, INFO_TYPE_VERSION, &v);
	/* The library stays loaded: a driver library's destructors are not ours to run early. */
	if (rc) {
		snprintf(why, len, "halGetDeviceInfo of device 0 failed (%d)", rc);
		return -EIO;
	}
	*id = (int)(((uint64_t)v >> 8) & 0xff);
	return 0;
}

int chip_from_driver(const char *install_info, int *id, char *why, size_t len)
{
	static const char *const subdirs[] = { "driver/lib64", "driver/lib64/common",
					       "driver/lib64/driver" };
	char base[PATH_MAX], lib[PATH_MAX + 64];

	if (driver_path(install_info, base, sizeof(base))) {
		snprintf(why, len, "no driver (%s names none)", install_info);
		return -ENOENT;
	}
	for (size_t i = 0; i < sizeof(subdirs) / sizeof(subdirs[0]); i++) {
		snprintf(lib, sizeof(lib), "%s/%s/libascend_hal.so", base, subdirs[i]);
		if (access(lib, F_OK))
			continue;
		if (!trusted_file(lib)) {
			snprintf(why, len,
				 "%s is not owned by root or you, or others may write it: not loaded",
				 lib);
			return -EPERM;
		}
		return call_driver(lib, id, why, len);
	}
	snprintf(why, len, "no libascend_hal.so under %s/driver/lib64", base);
	return -ENOENT;
}

static int agent_written(const cJSON *root)
{
	const cJSON *cann = cJSON_GetObjectItemCaseSensitive(root, "cannVersion");

	return cJSON_IsString(cann) && !strcmp(cann->valuestring, "none");
}

/*
 * platform_version of one info.json (a string or a number). --output may be
 * writable by targets: opened as every untrusted file is (inside the folder,
 * no final symlink, regular files only, never blocking), read bounded.
 */
static int info_json_chip(int dirfd, const char *name, int *id)
{
	int fd = rootfile_open(dirfd, name);
	cJSON *root = NULL;
	const cJSON *v;
	char *text = NULL;
	size_t n;
	int rc = -ENOENT;

	if (fd < 0)
		return -ENOENT;
	if (rootfile_read(fd, INFO_JSON_MAX, &text, &n) || n == 0)
		goto out;
	root = cJSON_Parse(text);
	v = cJSON_GetObjectItemCaseSensitive(root, "platform_version");
	/*
	 * dynprof's agent (cannVersion "none") names the chip it was told, not
	 * one it found: its folders are no evidence of the card's chip.
	 */
	if (agent_written(root))
		v = NULL;
	if (cJSON_IsString(v) && !decimal_int(v->valuestring, 0, 255, id))
		rc = 0;
	else if (cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble <= 255)
		rc = (*id = (int)v->valuedouble, 0);
out:
	cJSON_Delete(root);
	free(text);
	close(fd);
	return rc;
}

static int prof_dir_chip(int dirfd, const char *prof, int *id)
{
	char path[NAME_MAX + 32];

	snprintf(path, sizeof(path), "%s/host/info.json", prof);
	if (!info_json_chip(dirfd, path, id))
		return 0;
	snprintf(path, sizeof(path), "%s/device_0/info.json.0", prof);
	return info_json_chip(dirfd, path, id);
}

/*
 * The newest folders first, CHIP_TRIES at most: an --output of thousands of
 * other tools' folders without an info.json costs a bounded look, not two
 * opens per folder (measured: 10000 opens before the first connect with
 * 5000 such folders).
 */
#define CHIP_TRIES 32

static int newest_first(const void *a, const void *b)
{
	return strcmp(*(char *const *)b, *(char *const *)a);
}

/* The PROF_ names in dirfd, newest first (names carry the start time); how many. */
static int prof_names(int dirfd, char ***names, int *seen)
{
	DIR *d = fdopendir(dup(dirfd));
	struct dirent *e;
	char **v = NULL;
	int n = 0, cap = 0;

	*seen = 0;
	for (int i = 0; d && (e = readdir(d)) && i < 100000; i++) {
		if (strncmp(e->d_name, "PROF_", 5))
			continue;
		(*seen)++;
		if (n == cap) {
			char **more = realloc(v, (size_t)(cap = cap ? 2 * cap : 64) * sizeof(*v));

			if (!more)
				break; /* those listed so far are tried */
			v = more;
		}
		if (!(v[n] = strdup(e->d_name)))
			break;
		n++;
	}
	if (d)
		closedir(d);
	if (n)
		qsort(v, (size_t)n, sizeof(*v), newest_first);
	*names = v;
	return n;
}

int chip_from_prof_dirs(const char *dir, int *id, char *where, size_t len)
{
	int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char **names = NULL;
	int found = -1, seen, n, i;

	if (dirfd < 0) {
		snprintf(where, len, "no folder %s yet", dir);
		return -ENOENT;
	}
	n = prof_names(dirfd, &names, &seen);
	for (i = 0; i < n && i < CHIP_TRIES && found < 0; i++)
		if (prof_dir_chip(dirfd, names[i], &found))
			found = -1;
	if (found >= 0)
		snprintf(where, len, "%s/%s", dir, names[i - 1]);
	for (int k = 0; k < n; k++)
		free(names[k]);
	free(names);
	close(dirfd);
	if (found >= 0) {
		*id = found;
		return 0;
	}
	/* Said as it is: folders there whose info.json names no chip are not "no folder". */
	if (seen)
		snprintf(where, len,
			 "%d PROF_ folder%s in %s, none of the newest %d with a platform_version",
			 seen, seen == 1 ? "" : "s", dir, n < CHIP_TRIES ? n : CHIP_TRIES);
	else
		snprintf(where, len, "no PROF_ folder in %s", dir);
	return -ENOENT;
}

void chip_detect(const char *option, const char *output, struct chip_found *f)
{
	const struct chip_info *given = option ? chip_by_text(option) : NULL;
	char drv[PATH_MAX + 96], where[PATH_MAX + NAME_MAX + 2];
	int id;

	memset(f, 0, sizeof(*f));
	if (!chip_from_driver(CHIP_INSTALL_INFO, &id, drv, sizeof(drv))) {
		f->chip = chip_by_id(id);
		if (!f->chip)
			snprintf(drv, sizeof(drv),
				 "the driver reports chip %d, which msprof does not know", id);
		else if (given && given != f->chip)
			snprintf(f->note, sizeof(f->note),
				 "--chip=%s ignored: the driver reports chip %d (%s)", option, id,
				 f->chip->name);
	}
	snprintf(where, sizeof(where), "no result folder");
	if (!f->chip && output && !chip_from_prof_dirs(output, &id, where, sizeof(where))) {
		f->chip = chip_by_id(id);
		if (f->chip && given && given != f->chip)
			snprintf(f->note, sizeof(f->note),
				 "--chip=%s ignored: %s/host/info.json says platform_version %d (%s)",
				 option, where, id, f->chip->name);
	}
	if (!f->chip)
		f->chip = given;
	if (!f->chip)
		snprintf(f->why, sizeof(f->why), "%s, %s, no --chip", drv, where);
}
