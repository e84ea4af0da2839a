// SPDX-License-Identifier: MIT
/* Engines' own configuration and state beyond the fixed places (see engine_conf.h). */
#include <ctype.h>
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
			 !quoted_value(s, "graphroot", out->graphroot, sizeof(out->graphroot)))
			quoted_value(s, "driver", out->driver, sizeof(out->driver));
		line = eol ? eol + 1 : NULL;
	}
	if (out->graphroot[0] != '/')
		out->graphroot[0] = '\0';
	for (const char *c = out->driver; *c; c++)
		if (!islower((unsigned char)*c) && !isdigit((unsigned char)*c)) {
			out->driver[0] = '\0';
			break;
		}
}

/* root's storage.conf: "" fields when absent, unreadable or not root's. */
static void storage_conf_read(struct storage_conf *conf)
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

int storage_place(int i, const char *dflt, char *root, size_t rootlen, char *rel, size_t rellen)
{
	static const char *const drivers[] = { "overlay", "vfs", "btrfs", "zfs", "devmapper", "aufs" };
	static struct storage_conf conf; /* read at each lookup's first place */
	const char *env = getenv("DYNPROF_STORAGE_ROOT"), *driver = NULL;

	if (i < 0)
		return -ENOENT;
	if (i == 0)
		storage_conf_read(&conf);
	/* storage.conf's driver first, then every driver that is not it. */
	if (conf.driver[0] && i == 0)
		driver = conf.driver;
	for (size_t d = 0, k = conf.driver[0] ? 1 : 0; !driver && d < ARRAY_SIZE(drivers); d++) {
		if (conf.driver[0] && !strcmp(drivers[d], conf.driver))
			continue;
		if ((int)k++ == i)
			driver = drivers[d];
	}
	if (!driver)
		return -ENOENT;
	snprintf(root, rootlen, "%s",
		 env && env[0] == '/' ? env :
		 conf.graphroot[0]    ? conf.graphroot :
					dflt);
	snprintf(rel, rellen, "%s-containers/containers.json", driver);
	return 0;
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
