// SPDX-License-Identifier: MIT
/* The result folder and its PROF_ record (see output.h). */
#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "report/escape.h"
#include "results/output.h"
#include "report/report.h"
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
	} names[] = { { '\n', "newline" },   { '\f', "form feed" }, { '\r', "carriage return" },
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
		report_error("Argument --output: invalid path %s: %s.", given ? given : "(default)",
			     strerror(-rc));
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
		report_error("Argument --output: cannot use %s as the result folder: %s.", path,
			     strerror(-rc));
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

bool output_prof_known_next(const char **p, char *name, size_t len)
{
	const char *nl;
	size_t n;

	if (!*p || !**p)
		return false;
	nl = strchr(*p, '\n');
	n = nl ? (size_t)(nl - *p) : strlen(*p);
	snprintf(name, len, "%.*s", (int)n, *p);
	*p += n + (nl ? 1 : 0);
	return true;
}

int output_prof_known_drop(char **known, const char *name)
{
	size_t n = strlen(name);

	for (char *p = *known; p && *p;) {
		char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		if (len == n && !strncmp(p, name, n)) {
			memmove(p, nl ? nl + 1 : p + len, strlen(nl ? nl + 1 : p + len) + 1);
			return 1;
		}
		p = nl ? nl + 1 : p + len;
	}
	return 0;
}

int output_prof_known_add(char **known, const char *name)
{
	return name_is_known(*known, name) ? 0 : remember(known, name);
}

/* `n` characters of s from `from`, each within [lo, hi]. */
static bool chars_in(const char *s, size_t from, size_t n, char lo, char hi)
{
	for (size_t i = from; i < from + n; i++)
		if (s[i] < lo || s[i] > hi)
			return false;
	return true;
}

/*
 * CANN's two folder name patterns, the one place both are written:
 *   9.x: PROF_<6 digits>_<17 digits>_<8 digits: pid><8 letters A-R>
 *   v1:  PROF_<6 digits>_<17 digits>_<16 letters A-R>
 * A target's folder name is used (moved, recorded, printed) only when it
 * is exactly one of them: nothing else can hold a '/', a newline or an
 * escape sequence.
 */
#define PROF_NAME_LEN (5 + 6 + 1 + 17 + 1 + 16)

static bool prof_name_head(const char *name)
{
	return strlen(name) == PROF_NAME_LEN && !strncmp(name, "PROF_", 5) &&
	       chars_in(name, 5, 6, '0', '9') && name[11] == '_' &&
	       chars_in(name, 12, 17, '0', '9') && name[29] == '_';
}

bool output_is_v2_prof_name(const char *name)
{
	return prof_name_head(name) && chars_in(name, 30, 8, '0', '9') &&
	       chars_in(name, 38, 8, 'A', 'R');
}

bool output_is_v1_prof_name(const char *name)
{
	return prof_name_head(name) && chars_in(name, 30, 16, 'A', 'R');
}

/* A 9.x name of the process whose pid (in its namespace) is nspid. */
static bool prof_name_of(const char *name, int nspid)
{
	char pid8[16];

	if (!output_is_v2_prof_name(name) || nspid < 0 || nspid > 99999999)
		return false;
	snprintf(pid8, sizeof(pid8), "%08d", nspid);
	return !strncmp(name + 30, pid8, 8);
}

/* A real folder (a target may plant a symlink or a file with the name). */
static int entry_kind(int dfd, const char *name)
{
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : S_ISLNK(st.st_mode) ? -ELOOP : -ENOTDIR;
}

static bool name_wanted(const char *name, int nspid)
{
	if (nspid == OUTPUT_V1_NAMES)
		return output_is_v1_prof_name(name);
	return prof_name_of(name, nspid);
}

/* One wanted, unknown name of `dir`, of that kind: remembered, and told. -ENOMEM ends the look. */
static int tell(const char *dir, const char *name, int kind, char **known,
		void (*found)(void *ctx, const char *name), void *ctx)
{
	if (kind == -ENOENT)
		return 0; /* gone since it was listed */
	if (remember(known, name))
		return -ENOMEM;
	/* Said once (it is now known); the name matched the pattern, so it prints safely. */
	if (kind && found)
		report_warning("dynprof: %s/%s is %s: not a window folder, not saved", dir, name,
			       kind == -ELOOP ? "a symlink" : "not a folder");
	else if (found)
		found(ctx, name);
	return 0;
}

static int consider(int dfd, const char *dir, const char *name, char **known,
		    void (*found)(void *ctx, const char *name), void *ctx)
{
	return tell(dir, name, entry_kind(dfd, name), known, found, ctx);
}

int output_prof_entry(const char *dir, const char *name, int kind, int nspid, char **known,
		      void (*found)(void *ctx, const char *name), void *ctx)
{
	if (name_is_known(*known, name) || !name_wanted(name, nspid))
		return 0; /* known; not this target's */
	return tell(dir, name, kind, known, found, ctx);
}

int output_new_prof_dirs(const char *dir, int nspid, char **known,
			 void (*found)(void *ctx, const char *name), void *ctx)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int rc = 0;

	if (!d)
		return -errno;
	while (rc == 0 && (de = readdir(d)))
		if (!name_is_known(*known, de->d_name) && name_wanted(de->d_name, nspid))
			rc = consider(dirfd(d), dir, de->d_name, known, found, ctx);
	closedir(d);
	return rc;
}

/* ---- one listing for many targets ----------------------------------------- */

static int push_name(char ***v, size_t *n, size_t *cap, const char *name)
{
	char *copy;

	if (*n == *cap) {
		size_t more = *cap ? 2 * *cap : 64;
		char **grown = realloc(*v, more * sizeof(**v));

		if (!grown)
			return -ENOMEM;
		*v = grown;
		*cap = more;
	}
	copy = strdup(name);
	if (!copy)
		return -ENOMEM;
	(*v)[(*n)++] = copy;
	return 0;
}

/* From the pid digits on: a pid's names are next to each other. */
static int by_pid_part(const void *a, const void *b)
{
	return strcmp(*(char *const *)a + 30, *(char *const *)b + 30);
}

bool output_listing_valid(const struct output_listing *l)
{
	return l->listed;
}

void output_listing_forget(struct output_listing *l)
{
	for (size_t i = 0; i < l->nv2; i++)
		free(l->v2[i]);
	for (size_t i = 0; i < l->nv1; i++)
		free(l->v1[i]);
	l->nv2 = l->nv1 = 0;
	if (l->listed || l->aside)
		close(l->dirfd);
	l->listed = l->aside = false;
}

void output_listing_set_aside(struct output_listing *l)
{
	if (!l->listed)
		return;
	l->listed = false;
	l->aside = true;
}

/* A ctime this close to the listing may hide a change made just after it (coarse clocks). */
#define LISTING_CTIME_MARGIN_NS 50000000LL

static long long ts_ns(const struct timespec *t)
{
	return (long long)t->tv_sec * 1000000000LL + t->tv_nsec;
}

/* The set-aside listing of `dir`, if the folder is the same and did not change since. */
static bool take_back(struct output_listing *l, const char *dir)
{
	struct stat now;

	if (!l->aside || strcmp(l->dir, dir) || stat(dir, &now) < 0)
		return false;
	if (now.st_dev != l->seen.st_dev || now.st_ino != l->seen.st_ino ||
	    ts_ns(&now.st_ctim) != ts_ns(&l->seen.st_ctim) ||
	    ts_ns(&l->seen.st_ctim) > ts_ns(&l->listed_at) - LISTING_CTIME_MARGIN_NS)
		return false;
	l->aside = false;
	l->listed = true;
	return true;
}

void output_listing_free(struct output_listing *l)
{
	output_listing_forget(l);
	free(l->v2);
	free(l->v1);
	l->v2 = l->v1 = NULL;
	l->v2cap = l->v1cap = 0;
}

int output_listing_read(struct output_listing *l, const char *dir)
{
	struct dirent *de;
	DIR *d;
	int rc = 0;

	if (take_back(l, dir))
		return 0;
	output_listing_forget(l);
	clock_gettime(CLOCK_REALTIME, &l->listed_at); /* before the folder is looked at */
	l->reads++;
	d = opendir(dir);
	if (!d)
		return -errno;
	if (fstat(dirfd(d), &l->seen) < 0)
		memset(&l->seen, 0, sizeof(l->seen)); /* never taken back */
	while (!rc && (de = readdir(d))) {
		if (output_is_v2_prof_name(de->d_name))
			rc = push_name(&l->v2, &l->nv2, &l->v2cap, de->d_name);
		else if (output_is_v1_prof_name(de->d_name))
			rc = push_name(&l->v1, &l->nv1, &l->v1cap, de->d_name);
	}
	/* The names are checked through this fd later, as readdir's caller would. */
	l->dirfd = rc ? -1 : fcntl(dirfd(d), F_DUPFD_CLOEXEC, 0);
	if (!rc && l->dirfd < 0)
		rc = -errno;
	l->listed = l->dirfd >= 0;
	closedir(d);
	if (rc) {
		output_listing_forget(l);
		return rc;
	}
	if (l->nv2 > 1) /* none: no array at all */
		qsort(l->v2, l->nv2, sizeof(*l->v2), by_pid_part);
	snprintf(l->dir, sizeof(l->dir), "%s", dir);
	return 0;
}

/* The first 9.x name whose pid part is `pid8` or after. */
static size_t first_of_pid(const struct output_listing *l, const char *pid8)
{
	size_t lo = 0, hi = l->nv2;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strncmp(l->v2[mid] + 30, pid8, 8) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int output_new_prof_dirs_listed(const struct output_listing *l, int nspid, char **known,
				void (*found)(void *ctx, const char *name), void *ctx)
{
	char pid8[16];

	if (!l->listed)
		return -EBADF;
	if (nspid == OUTPUT_V1_NAMES) {
		for (size_t i = 0; i < l->nv1; i++)
			if (!name_is_known(*known, l->v1[i]) &&
			    consider(l->dirfd, l->dir, l->v1[i], known, found, ctx))
				break;
		return 0;
	}
	if (nspid < 0 || nspid > 99999999)
		return 0;
	snprintf(pid8, sizeof(pid8), "%08d", nspid);
	for (size_t i = first_of_pid(l, pid8); i < l->nv2 && !strncmp(l->v2[i] + 30, pid8, 8); i++)
		if (!name_is_known(*known, l->v2[i]) &&
		    consider(l->dirfd, l->dir, l->v2[i], known, found, ctx))
			break;
	return 0;
}

int output_open_file(const char *dir, const char *name)
{
	int dfd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), fd, err = 0;
	const int flags = O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
	struct stat st;

	if (dfd < 0)
		return -errno;
	/* New: made here, so nobody else's. */
	fd = openat(dfd, name, flags | O_CREAT | O_EXCL, 0640);
	if (fd < 0 && errno == EEXIST) {
		/* Ours from earlier in this run, or planted: only ours is used. */
		fd = openat(dfd, name, flags);
		if (fd >= 0 && (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
				st.st_nlink != 1))
			err = -EPERM;
	}
	if (fd < 0)
		err = -errno;
	close(dfd);
	if (err && fd >= 0)
		close(fd);
	return err ? err : fd;
}

int output_subdir(const char *dir, const char *name)
{
	int dfd, sub, err = 0;
	struct stat st;

	if (!name[0] || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return -EINVAL;
	dfd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	if (mkdirat(dfd, name, 0750) && errno != EEXIST)
		err = -errno;
	/* Made now or earlier in this run, or planted: only a folder of ours is used. */
	sub = err ? -1 : openat(dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (!err && sub < 0)
		err = errno == ENOTDIR || errno == ELOOP ? -EPERM : -errno;
	if (sub >= 0 && (fstat(sub, &st) || st.st_uid != geteuid()))
		err = -EPERM;
	if (sub >= 0)
		close(sub);
	close(dfd);
	return err;
}

int output_record(const char *dir, const char *prof_name)
{
	char name[64];
	int fd, rc = 0;
	size_t n = strlen(prof_name);

	snprintf(name, sizeof(name), "%d_profiling_output_record", (int)getpid());
	fd = output_open_file(dir, name);
	if (fd < 0)
		return fd;
	errno = 0;
	if (write(fd, prof_name, n) != (ssize_t)n || write(fd, "\n", 1) != 1)
		rc = errno ? -errno : -EIO;
	if (close(fd) && rc == 0)
		rc = -errno;
	return rc;
}

static void add_text(cJSON *o, const char *key, const char *text)
{
	char *safe = text_escape_dup(text);

	cJSON_AddStringToObject(o, key, safe ? safe : "(out of memory)");
	free(safe);
}

int output_record_origin(const char *dir, const struct output_origin *o)
{
	cJSON *j = cJSON_CreateObject();
	char name[64], path[2 * PATH_MAX], *text;
	int fd, rc = 0;
	size_t n;

	if (!j)
		return -ENOMEM;
	/* Both: a script joins "path" as it is, or "folder" to the --output it knows. */
	if (snprintf(path, sizeof(path), "%s/%s", dir, o->folder) >= (int)sizeof(path)) {
		cJSON_Delete(j);
		return -ENAMETOOLONG;
	}
	add_text(j, "folder", o->folder);
	add_text(j, "path", path);
	cJSON_AddNumberToObject(j, "pid", o->pid);
	cJSON_AddNumberToObject(j, "nspid", o->nspid);
	if (o->container && o->container[0])
		add_text(j, "container", o->container);
	else
		cJSON_AddNullToObject(j, "container");
	add_text(j, "command", o->command ? o->command : "");
	text = cJSON_PrintUnformatted(j);
	cJSON_Delete(j);
	if (!text)
		return -ENOMEM;
	snprintf(name, sizeof(name), "%d_dynprof_folders", (int)getpid());
	fd = output_open_file(dir, name);
	if (fd < 0) {
		free(text);
		return fd;
	}
	n = strlen(text);
	text[n++] = '\n'; /* over the NUL: the line is written whole or not at all */
	errno = 0;
	if (write(fd, text, n) != (ssize_t)n)
		rc = errno ? -errno : -EIO;
	free(text);
	if (close(fd) && rc == 0)
		rc = -errno;
	return rc;
}
