// SPDX-License-Identifier: MIT
/* Engines' own configuration and state beyond the fixed places (see engine_conf.h). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/rootfile.h"
#include "model/engine_conf.h"
#include "shared/array_size.h"

#define CONTAINERD_ID_MAX 76 /* containerd's identifiers: at most 76 characters */

/* ---- storage.conf ------------------------------------------------------------ */

/* `key = "value"` on one line (blanks around, a comment after): the value, else false. */
static bool quoted_value(const char *line, const char *key, char *out, size_t len)
{
	size_t k = strlen(key);
	const char *v, *end;

	while (*line == ' ' || *line == '\t')
		line++;
	if (strncmp(line, key, k))
		return false;
	for (v = line + k; *v == ' ' || *v == '\t'; v++)
		;
	if (*v++ != '=')
		return false;
	while (*v == ' ' || *v == '\t')
		v++;
	if (*v++ != '"' || !(end = strchr(v, '"')) || (size_t)(end - v) >= len)
		return false;
	memcpy(out, v, (size_t)(end - v));
	out[end - v] = '\0';
	return true;
}

void storage_conf_parse(const char *text, struct storage_conf *out)
{
	bool in_storage = false;

	*out = (struct storage_conf){ 0 };
	for (const char *line = text; line && *line;) {
		const char *eol = strchr(line, '\n');
		char buf[4200];
		size_t n = eol ? (size_t)(eol - line) : strlen(line);
		const char *s = buf;

		snprintf(buf, sizeof(buf), "%.*s", (int)n, line);
		while (*s == ' ' || *s == '\t')
			s++;
		/* Only the [storage] table itself: [storage.options] has keys of its own. */
		if (*s == '[')
			in_storage = !strncmp(s, "[storage]", 9);
		else if (in_storage &&
			 !quoted_value(s, "graphroot", out->graphroot, sizeof(out->graphroot)) &&
			 !quoted_value(s, "rootless_storage_path", out->rootless_path,
				       sizeof(out->rootless_path)))
			quoted_value(s, "driver", out->driver, sizeof(out->driver));
		line = eol ? eol + 1 : NULL;
	}
	/* Absolute, or a variable rootless paths may start with ($HOME/...). */
	if (out->graphroot[0] != '/' && out->graphroot[0] != '$')
		out->graphroot[0] = '\0';
	if (out->rootless_path[0] != '/' && out->rootless_path[0] != '$')
		out->rootless_path[0] = '\0';
	for (const char *c = out->driver; *c; c++)
		if (!islower((unsigned char)*c) && !isdigit((unsigned char)*c)) {
			out->driver[0] = '\0';
			break;
		}
}

/* root's storage.conf: "" fields when absent, unreadable or not root's. */
void storage_conf_read(struct storage_conf *conf)
{
	const char *path = getenv("DYNPROF_STORAGE_CONF");
	int fd = open(path && path[0] == '/' ? path : "/etc/containers/storage.conf",
		      O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	struct stat st;
	char *text = NULL;
	size_t n;

	*conf = (struct storage_conf){ 0 };
	if (fd < 0)
		return;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_uid == 0 &&
	    !rootfile_read(fd, ENGINE_CONF_MAX, &text, &n))
		storage_conf_parse(text, conf);
	free(text);
	close(fd);
}

static const char *const drivers[] = { "overlay", "vfs", "btrfs", "zfs", "devmapper", "aufs" };

/* The k-th driver to try: `first` (storage.conf's, may be ""), then every other; NULL past. */
static const char *driver_at(size_t k, const char *first)
{
	if (first[0] && k == 0)
		return first;
	for (size_t d = 0, j = first[0] ? 1 : 0; d < ARRAY_SIZE(drivers); d++) {
		if (first[0] && !strcmp(drivers[d], first))
			continue;
		if (j++ == k)
			return drivers[d];
	}
	return NULL;
}

/* The number of drivers driver_at gives for `first`. */
static size_t driver_count(const char *first)
{
	size_t k = 0;

	while (driver_at(k, first))
		k++;
	return k;
}

int storage_place(int i, const char *dflt, char *root, size_t rootlen, char *rel, size_t rellen)
{
	static struct storage_conf conf; /* read at each lookup's first place */
	const char *env = getenv("DYNPROF_STORAGE_ROOT"), *driver;

	if (i < 0)
		return -ENOENT;
	if (i == 0)
		storage_conf_read(&conf);
	if (!(driver = driver_at((size_t)i, conf.driver)))
		return -ENOENT;
	snprintf(root, rootlen, "%s",
		 env && env[0] == '/'     ? env :
		 conf.graphroot[0] == '/' ? conf.graphroot :
					    dflt);
	snprintf(rel, rellen, "%s-containers/containers.json", driver);
	return 0;
}

/* ---- rootless podman ----------------------------------------------------------- */

/* The variable at s ("$NAME" or "${NAME}"): its value and length in *n, else NULL. */
static const char *variable(const char *s, const struct storage_user *u, size_t *n, char *num, size_t numlen)
{
	static const char *const names[] = { "HOME", "UID", "USER" };
	bool brace = s[1] == '{';
	const char *name = s + 1 + brace;

	for (size_t v = 0; v < ARRAY_SIZE(names); v++) {
		size_t k = strlen(names[v]);

		if (strncmp(name, names[v], k) || (brace && name[k] != '}') ||
		    (!brace && (isalnum((unsigned char)name[k]) || name[k] == '_')))
			continue;
		*n = 1 + brace + k + brace;
		if (v == 1) {
			snprintf(num, numlen, "%u", (unsigned)u->uid);
			return num;
		}
		return v == 0 ? u->home : u->name;
	}
	return NULL;
}

int storage_path_expand(const char *path, const struct storage_user *u, char *out, size_t len)
{
	size_t o = 0;
	char num[16];

	if (!len)
		return -ENAMETOOLONG;
	out[0] = '\0';
	for (const char *s = path; *s;) {
		const char *val = s, *next;
		size_t n = 1, k;

		if (*s == '$') {
			/* containers/storage expands the environment; its user's is not ours to see. */
			if (!(val = variable(s, u, &n, num, sizeof(num))) || !val[0])
				return -EINVAL;
			k = strlen(val);
		} else {
			next = strchr(s, '$');
			k = n = next ? (size_t)(next - s) : strlen(s);
		}
		if (o + k >= len)
			return -ENAMETOOLONG;
		memcpy(out + o, val, k);
		o += k;
		s += n;
	}
	out[o] = '\0';
	if (out[0] != '/' || strstr(out, "/../") || (o >= 3 && !strcmp(out + o - 3, "/..")))
		return -EINVAL;
	return 0;
}

int rootless_place(int i, const struct storage_conf *user, const struct storage_conf *sys,
		   const struct storage_user *u, char *root, size_t rootlen, char *rel, size_t rellen)
{
	const char *first = user->driver[0] ? user->driver : sys->driver, *driver;
	size_t nd = driver_count(first);
	char dflt[4200];
	/* The user's graphroot, the administrator's path for rootless users, podman's default. */
	const char *roots[] = { user->graphroot, sys->rootless_path, dflt };

	snprintf(dflt, sizeof(dflt), "%s/.local/share/containers/storage", u->home);
	for (size_t r = 0; i >= 0 && r < ARRAY_SIZE(roots); r++) {
		if (!roots[r][0] || storage_path_expand(roots[r], u, root, rootlen))
			continue;
		if ((size_t)i < nd) {
			driver = driver_at((size_t)i, first);
			snprintf(rel, rellen, "%s-containers/containers.json", driver);
			return 0;
		}
		i -= (int)nd;
	}
	return -ENOENT;
}

/* ---- containerd -------------------------------------------------------------- */

/* containerd's rule for namespaces and ids: alphanumerics joined by single '.', '_', '-'. */
static bool containerd_ident(const char *s, size_t n)
{
	if (n == 0 || n > CONTAINERD_ID_MAX || !isalnum((unsigned char)s[0]) ||
	    !isalnum((unsigned char)s[n - 1]))
		return false;
	for (size_t i = 1; i < n; i++) {
		bool sep = strchr("._-", s[i]) != NULL;

		if (!isalnum((unsigned char)s[i]) && !sep)
			return false;
		if (sep && strchr("._-", s[i - 1]))
			return false;
	}
	return true;
}

int containerd_task_candidate(const char *cgroup_text, char *name, size_t len)
{
	const char *line = cgroup_text;

	if (len)
		name[0] = '\0';
	while (line && *line) {
		const char *eol = strchr(line, '\n');
		const char *end = eol ? eol : line + strlen(line);
		const char *c1 = memchr(line, ':', (size_t)(end - line));
		const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(end - c1 - 1)) : NULL;
		const char *p = c2 ? c2 + 1 : NULL, *slash;

		/* "/<namespace>/<id>", nothing above or below. */
		if (p && *p == '/' && (slash = memchr(p + 1, '/', (size_t)(end - p - 1))) &&
		    containerd_ident(p + 1, (size_t)(slash - p - 1)) &&
		    containerd_ident(slash + 1, (size_t)(end - slash - 1)) &&
		    (size_t)(end - p - 1) < len) {
			snprintf(name, len, "%.*s", (int)(end - p - 1), p + 1);
			return 0;
		}
		line = eol ? eol + 1 : NULL;
	}
	return -ENOENT;
}

/* The folder `name` beneath `dirfd`, not through a symlink; closes dirfd. */
static int down(int dirfd, const char *name)
{
	int fd, err;

	if (dirfd < 0)
		return dirfd;
	fd = openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	err = errno;
	close(dirfd);
	return fd < 0 ? -err : fd;
}

int containerd_task_name(const char *cgroup_text, char *name, size_t len)
{
	const char *state = getenv("DYNPROF_CONTAINERD_STATE");
	char ns[CONTAINERD_ID_MAX * 2 + 2], *id;
	struct stat st;
	int fd;

	if (len)
		name[0] = '\0';
	if (containerd_task_candidate(cgroup_text, ns, sizeof(ns)))
		return -ENOENT;
	id = strchr(ns, '/');
	*id++ = '\0';
	fd = open(state && state[0] == '/' ? state : "/run/containerd", O_PATH | O_DIRECTORY | O_CLOEXEC);
	fd = down(down(down(fd, "io.containerd.runtime.v2.task"), ns), id);
	if (fd < 0)
		return -ENOENT;
	/* The bundle is containerd's (root's): a folder a user made names nothing. */
	if (fstat(fd, &st) || st.st_uid != 0 || (size_t)snprintf(name, len, "%s/%s", ns, id) >= len) {
		close(fd);
		if (len)
			name[0] = '\0';
		return -ENOENT;
	}
	close(fd);
	return 0;
}

/* ---- nerdctl ------------------------------------------------------------------ */

int nerdctl_name_file(const char *file, const char *text, const char *id, char *name, size_t len)
{
	size_t n = strlen(text), k = strlen(file);

	if (len)
		name[0] = '\0';
	/* nerdctl writes the id alone; it trims blanks when it reads one back. */
	while (n && isspace((unsigned char)text[n - 1]))
		n--;
	while (n && isspace((unsigned char)*text)) {
		text++;
		n--;
	}
	if (!containerd_ident(file, k))
		return -EINVAL;
	if (n != strlen(id) || memcmp(text, id, n))
		return -ENOENT;
	if (k >= len)
		return -ENAMETOOLONG;
	memcpy(name, file, k + 1);
	return 0;
}

/* The folder `name` beneath `dirfd`, root's and writable by no one else; else -errno. */
static int root_dir(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || st.st_uid != 0 || (st.st_mode & 022)) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* A reader of the folder fd (kept open by the caller), else NULL. */
static DIR *dir_of(int fd)
{
	int d = dup(fd);
	DIR *dir = d >= 0 ? fdopendir(d) : NULL;

	if (d >= 0 && !dir)
		close(d);
	return dir;
}

#define NERDCTL_NAME_FILE_MAX 256 /* an id, maybe a newline */

/* One names/<namespace>/ folder: the file holding `id`, 0 with `name` set. */
static int nerdctl_in_namespace(int nsfd, const char *id, char *name, size_t len)
{
	DIR *dir = dir_of(nsfd);
	struct dirent *e;
	int rc = -ENOENT;

	while (dir && rc && (e = readdir(dir))) {
		int fd = e->d_name[0] == '.' ? -ENOENT : rootfile_open(nsfd, e->d_name);
		struct stat st;
		char *text = NULL;
		size_t n;

		if (fd < 0)
			continue;
		if (!fstat(fd, &st) && st.st_uid == 0 &&
		    !rootfile_read(fd, NERDCTL_NAME_FILE_MAX, &text, &n) && strlen(text) == n)
			rc = nerdctl_name_file(e->d_name, text, id, name, len) ? -ENOENT : 0;
		free(text);
		close(fd);
	}
	if (dir)
		closedir(dir);
	return rc;
}

/* Each <entry>/names/<namespace>/ beneath the folder fd (depth 0: the data root). */
static int nerdctl_walk(int fd, int depth, const char *id, char *name, size_t len)
{
	DIR *dir;
	struct dirent *e;
	int rc = -ENOENT;

	if (depth == 2)
		return nerdctl_in_namespace(fd, id, name, len);
	if (!(dir = dir_of(fd)))
		return -ENOENT;
	while (rc && (e = readdir(dir))) {
		int sub, names;

		if (e->d_name[0] == '.')
			continue;
		/* depth 0: an address hash, then its names/; depth 1: a namespace. */
		if (depth == 1 && !containerd_ident(e->d_name, strlen(e->d_name)))
			continue;
		sub = root_dir(fd, e->d_name);
		names = depth == 0 && sub >= 0 ? root_dir(sub, "names") : sub;
		if (names >= 0)
			rc = nerdctl_walk(names, depth + 1, id, name, len);
		if (names >= 0 && names != sub)
			close(names);
		if (sub >= 0)
			close(sub);
	}
	closedir(dir);
	return rc;
}

int nerdctl_name(const char *id, char *name, size_t len)
{
	const char *env = getenv("DYNPROF_NERDCTL_ROOT");
	int fd = root_dir(AT_FDCWD, env && env[0] == '/' ? env : "/var/lib/nerdctl"), rc;

	if (len)
		name[0] = '\0';
	if (fd < 0)
		return -ENOENT;
	rc = nerdctl_walk(fd, 0, id, name, len);
	close(fd);
	return rc;
}
