// SPDX-License-Identifier: MIT
/* The result folder and its PROF_ record (see output.h). */
#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "out/output.h"
#include "out/report.h"
#include "shared/mkdirp.h"
#include "shared/array_size.h"

/* msprof refuses these in paths: shell metacharacters and control codes. */
static const char forbidden[] = "\n\f\r\b\t\v\x7f\"'\\%><|&$;`";

char output_forbidden_char(const char *path)
{
	size_t n = strcspn(path, forbidden);

	return path[n];
}

const char *output_char_name(char c, char *buf, size_t len)
{
	static const struct {
		char c;
		const char *name;
	} names[] = { { '\n', "newline" }, { '\f', "form feed" }, { '\r', "carriage return" },
		      { '\b', "backspace" }, { '\t', "tab" },       { '\v', "vertical tab" },
		      { '\x7f', "DEL" } };

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (names[i].c == c)
			return names[i].name;
	snprintf(buf, len, "'%c'", c);
	return buf;
}

static int default_output(char *buf, size_t len)
{
	const char *work = getenv("ASCEND_WORK_PATH");

	if (work && *work) {
		if ((size_t)snprintf(buf, len, "%s/profiling_data", work) >= len)
			return -ENAMETOOLONG;
		return 0;
	}
	return getcwd(buf, len) ? 0 : -errno;
}

static int absolute(const char *given, char *buf, size_t len)
{
	char cwd[PATH_MAX];

	if (given[0] == '/') {
		if ((size_t)snprintf(buf, len, "%s", given) >= len)
			return -ENAMETOOLONG;
		return 0;
	}
	if (!getcwd(cwd, sizeof(cwd)))
		return -errno;
	if ((size_t)snprintf(buf, len, "%s/%s", cwd, given) >= len)
		return -ENAMETOOLONG;
	return 0;
}

int output_prepare(const char *given, char *abs, size_t len)
{
	char path[PATH_MAX], cname[8];
	struct stat st;
	char bad;
	int rc;

	if (len < PATH_MAX) /* realpath() writes up to PATH_MAX bytes */
		return -EINVAL;
	rc = given ? absolute(given, path, sizeof(path)) : default_output(path, sizeof(path));
	if (rc == 0 && !*path)
		rc = -EINVAL;
	if (rc) {
		report_error("Argument --output: invalid path %s: %s.", given ? given : "(default)", strerror(-rc));
		return rc;
	}
	bad = output_forbidden_char(path);
	if (bad) {
		report_error("Argument --output: invalid path %s: it contains the forbidden character %s.",
			     path, output_char_name(bad, cname, sizeof(cname)));
		return -EINVAL;
	}
	rc = mkdir_p(path, 0750);
	if (rc == 0 && (stat(path, &st) || !S_ISDIR(st.st_mode)))
		rc = errno ? -errno : -ENOTDIR;
	if (rc == 0 && !realpath(path, abs))
		rc = -errno;
	if (rc) {
		report_error("Argument --output: cannot use %s as the result folder: %s.", path, strerror(-rc));
		return rc;
	}
	return 0;
}

static bool name_is_known(const char *known, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = known; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		if (len == n && !strncmp(p, name, n))
			return true;
		p = nl ? nl + 1 : p + len;
	}
	return false;
}

static int remember(char **known, const char *name)
{
	size_t old = *known ? strlen(*known) : 0, n = strlen(name);
	char *grown = realloc(*known, old + n + 2);

	if (!grown)
		return -ENOMEM;
	memcpy(grown + old, name, n);
	grown[old + n] = '\n';
	grown[old + n + 1] = '\0';
	*known = grown;
	return 0;
}

int output_prof_known_add(char **known, const char *name)
{
	return name_is_known(*known, name) ? 0 : remember(known, name);
}

/* PROF_<6>_<17>_<pid8><rand8>: is this folder the given process's? */
static bool prof_name_of(const char *name, int nspid)
{
	char pid8[16];
	size_t len = strlen(name);

	if (strncmp(name, "PROF_", 5) || len < 16)
		return false;
	snprintf(pid8, sizeof(pid8), "%08d", nspid);
	return !strncmp(name + len - 16, pid8, 8);
}

/* `n` characters of s from `from`, each within [lo, hi]. */
static bool chars_in(const char *s, size_t from, size_t n, char lo, char hi)
{
	for (size_t i = from; i < from + n; i++)
		if (s[i] < lo || s[i] > hi)
			return false;
	return true;
}

bool output_is_v1_prof_name(const char *name)
{
	/* PROF_ 6 digits _ 17 digits _ 16 letters A..R, nothing else */
	return strlen(name) == 5 + 6 + 1 + 17 + 1 + 16 && !strncmp(name, "PROF_", 5) &&
	       chars_in(name, 5, 6, '0', '9') && name[11] == '_' && chars_in(name, 12, 17, '0', '9') &&
	       name[29] == '_' && chars_in(name, 30, 16, 'A', 'R');
}

/* A real folder (a target may plant a symlink or a file with the name). */
static bool is_real_dir(DIR *d, const char *name)
{
	struct stat st;

	return !fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) && S_ISDIR(st.st_mode);
}

static bool wanted(DIR *d, const char *name, int nspid)
{
	if (nspid == OUTPUT_V1_NAMES)
		return output_is_v1_prof_name(name) && is_real_dir(d, name);
	return prof_name_of(name, nspid) && is_real_dir(d, name);
}

int output_new_prof_dirs(const char *dir, int nspid, char **known,
			 void (*found)(void *ctx, const char *name), void *ctx)
{
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (name_is_known(*known, de->d_name) || !wanted(d, de->d_name, nspid))
			continue;
		if (remember(known, de->d_name))
			break;
		if (found)
			found(ctx, de->d_name);
	}
	closedir(d);
	return 0;
}

int output_record(const char *dir, const char *prof_name)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d_profiling_output_record", dir, (int)getpid());
	f = fopen(path, "ae");
	if (!f)
		return -errno;
	fprintf(f, "%s\n", prof_name);
	return fclose(f) ? -errno : 0;
}
