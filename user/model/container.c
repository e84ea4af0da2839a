// SPDX-License-Identifier: MIT
/*
 * The container a process runs in, from the text of /proc/<pid>/cgroup
 * (procmodel_container_id in procmodel.h).
 *
 * Each line is "<hierarchy>:<controllers>:<path>" (cgroup v1: one line per
 * hierarchy; v2: the single line "0::<path>"). Engines name the container's
 * cgroup after its 64-hex id, as a path component that is either the bare
 * id or "<engine>-<id>" with an optional ".scope" (systemd cgroup driver):
 *
 *   docker        /docker/<id>                       (cgroupfs driver)
 *                 /system.slice/docker-<id>.scope    (systemd driver)
 *   containerd    .../cri-containerd-<id>.scope
 *   cri-o         .../crio-<id>.scope, .../crio-<id>
 *   podman        /machine.slice/libpod-<id>.scope (rootless: under user.slice)
 *   nerdctl       /<namespace>/<id>                  (cgroupfs)
 *                 /system.slice/nerdctl-<id>.scope   (systemd driver)
 *   kubepods      /kubepods/<qos>/pod<uid>/<id>      (cgroupfs driver)
 *                 /kubepods.slice/kubepods-<qos>.slice/
 *                   kubepods-<qos>-pod<uid>.slice/<engine>-<id>.scope
 *
 * The deepest such component wins: docker-in-docker nests the inner
 * container's cgroup under the outer one, and the process belongs to the
 * inner one; "/docker/<id>/init.scope" (systemd inside the container)
 * still names <id>. Monitors that run beside a container but outside it
 * ("libpod-conmon-<id>.scope", "crio-conmon-<id>.scope") are not matched:
 * "conmon-<id>" is not an id. Host processes ("0::/init.scope",
 * "0::/user.slice/...", "0::/") give "".
 *
 * The full 64-hex id is kept (unique, what `docker inspect` and `crictl`
 * accept); tables print its first 12 characters as `docker ps` does.
 *
 * runc and crun run alone (no engine above them) take the container's id
 * from their caller, usually a name: `runc run trainjob`. With the systemd
 * driver the cgroup is "runc-trainjob.scope" / "crun-trainjob.scope", and
 * that name is the id. With the cgroupfs driver it is just "/trainjob", a
 * top-level folder no different in form from any other: procmodel_
 * container_guess() names it, and the caller takes it only for a process
 * in a pid namespace of its own (procscan.c), where a container is the
 * likely reason.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "model/procmodel.h"
#include "model/container.h"
#include "shared/array_size.h"

#define CONTAINER_ID_LEN 64

static const char *const engine_prefixes[] = {
	"docker-", "cri-containerd-", "crio-", "libpod-", "nerdctl-",
};

static int all_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

static int has_prefix(const char *s, size_t n, const char *prefix, size_t *plen)
{
	size_t k = strlen(prefix);

	if (n < k || memcmp(s, prefix, k))
		return 0;
	*plen = k;
	return 1;
}

/* runc's and crun's ids: letters, digits, '_', '+', '-', '.' (runc's own rule). */
static bool runtime_id(const char *s, size_t n)
{
	if (n == 0 || n > CONTAINER_ID_LEN || s[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("_+-.", s[i]))
			return false;
	return true;
}

/* "runc-<id>.scope", "crun-<id>.scope": the id, length in *idlen; else NULL. */
static const char *runtime_scope(const char *s, size_t n, size_t *idlen)
{
	static const char *const runtimes[] = { "runc-", "crun-" };
	size_t k;

	if (n <= 6 || memcmp(s + n - 6, ".scope", 6))
		return NULL;
	n -= 6;
	for (size_t i = 0; i < ARRAY_SIZE(runtimes); i++)
		if (has_prefix(s, n, runtimes[i], &k) && runtime_id(s + k, n - k)) {
			*idlen = n - k;
			return s + k;
		}
	return NULL;
}

/* The id inside one path component [s, s+n) (length in *idlen), or NULL. */
static const char *component_id(const char *s, size_t n, size_t *idlen)
{
	const char *rt = runtime_scope(s, n, idlen);
	size_t k;

	if (rt)
		return rt;
	*idlen = CONTAINER_ID_LEN;
	if (n > 6 && !memcmp(s + n - 6, ".scope", 6))
		n -= 6;
	for (size_t i = 0; i < ARRAY_SIZE(engine_prefixes); i++) {
		if (has_prefix(s, n, engine_prefixes[i], &k)) {
			s += k;
			n -= k;
			break;
		}
	}
	return n == CONTAINER_ID_LEN && all_hex(s, n) ? s : NULL;
}

/* The deepest id in the path [p, end) (length in *idlen), or NULL. */
static const char *path_id(const char *p, const char *end, size_t *idlen)
{
	const char *found = NULL;

	while (p < end) {
		const char *slash = memchr(p, '/', (size_t)(end - p));
		const char *ce = slash ? slash : end;
		size_t n;
		const char *id = component_id(p, (size_t)(ce - p), &n);

		if (id) {
			found = id;
			*idlen = n;
		}
		p = slash ? slash + 1 : end;
	}
	return found;
}

bool procmodel_cgroup_line(const char **cursor, struct cgroup_line *l)
{
	const char *line = *cursor;

	while (line && *line) {
		const char *eol = strchr(line, '\n');
		const char *end = eol ? eol : line + strlen(line);
		const char *c1 = memchr(line, ':', (size_t)(end - line));
		const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(end - c1 - 1)) : NULL;

		*cursor = line = eol ? eol + 1 : end;
		if (c2) {
			l->controllers = c1 + 1;
			l->controllers_len = (size_t)(c2 - c1 - 1);
			l->path = c2 + 1;
			l->path_len = (size_t)(end - c2 - 1);
			return true;
		}
	}
	return false;
}

void procmodel_container_id_in(const char *path, size_t n, char *id, size_t len)
{
	size_t idlen = CONTAINER_ID_LEN;
	const char *found = path_id(path, path + n, &idlen);

	if (len)
		snprintf(id, len, "%.*s", found ? (int)idlen : 0, found ? found : "");
}

void procmodel_container_id(const char *cgroup_text, char *id, size_t len)
{
	const char *cursor = cgroup_text;
	struct cgroup_line l;

	if (!id || len == 0)
		return;
	id[0] = '\0';
	/* All hierarchies of one process name the same container: the first wins. */
	while (!id[0] && procmodel_cgroup_line(&cursor, &l))
		procmodel_container_id_in(l.path, l.path_len, id, len);
}

void procmodel_rootless_id(const char *path, size_t n, char *id, size_t len)
{
	const char *p = path, *end = path + n, *found = NULL;

	while (p < end) {
		const char *slash = memchr(p, '/', (size_t)(end - p));
		const char *ce = slash ? slash : end;
		size_t k = (size_t)(ce - p), plen;

		if (k > 6 && !memcmp(ce - 6, ".scope", 6))
			k -= 6;
		if (has_prefix(p, k, "libpod-", &plen) && k - plen == CONTAINER_ID_LEN &&
		    all_hex(p + plen, CONTAINER_ID_LEN))
			found = p + plen;
		p = slash ? slash + 1 : end;
	}
	if (len)
		snprintf(id, len, "%.*s", found ? CONTAINER_ID_LEN : 0, found ? found : "");
}

static bool ends_with(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	return n >= k && !memcmp(s + n - k, suffix, k);
}

/* A systemd unit's folder (systemd running inside the container), not a name. */
static bool systemd_unit(const char *s, size_t n)
{
	static const char *const kinds[] = { ".scope", ".slice",  ".service",
					     ".mount", ".socket", ".swap" };

	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
		if (ends_with(s, n, kinds[i]))
			return true;
	return false;
}

/* Top-level folders of engines, hosts and managers: never a runtime's own id. */
static bool known_root(const char *s, size_t n)
{
	static const char *const roots[] = { "docker",     "kubepods", "lxc",       "libpod_parent",
					     "machine",    "system",   "user",      "init",
					     "podruntime", "runtime",  "containerd" };

	for (size_t i = 0; i < ARRAY_SIZE(roots); i++)
		if (strlen(roots[i]) == n && !memcmp(s, roots[i], n))
			return true;
	return false;
}

/* "/<name>" or "/<name>/<unit>..." (systemd inside): the name, else NULL. */
static const char *path_guess(const char *p, const char *end, size_t *n)
{
	const char *first, *slash;

	if (p >= end || *p != '/')
		return NULL;
	first = ++p;
	slash = memchr(p, '/', (size_t)(end - p));
	*n = (size_t)((slash ? slash : end) - first);
	if (!runtime_id(first, *n) || systemd_unit(first, *n) || known_root(first, *n))
		return NULL;
	for (p = slash; p && p < end;) {
		const char *next = memchr(p + 1, '/', (size_t)(end - p - 1));
		size_t k = (size_t)((next ? next : end) - p - 1);

		if (!systemd_unit(p + 1, k))
			return NULL;
		p = next;
	}
	return first;
}

void procmodel_container_guess_in(const char *path, size_t n, char *name, size_t len)
{
	size_t k = 0;
	const char *found = path_guess(path, path + n, &k);

	if (len)
		snprintf(name, len, "%.*s", found ? (int)k : 0, found ? found : "");
}

void procmodel_container_guess(const char *cgroup_text, char *name, size_t len)
{
	const char *cursor = cgroup_text;
	struct cgroup_line l;

	if (!name || len == 0)
		return;
	name[0] = '\0';
	while (!name[0] && procmodel_cgroup_line(&cursor, &l))
		procmodel_container_guess_in(l.path, l.path_len, name, len);
}

bool pm_proc_in_container(const struct pm_proc *p, const char *want)
{
	size_t n;

	if (!want)
		return true;
	if (!p->container[0])
		return false;
	if (!strcmp(p->container_name, want) || !strcmp(p->container, want))
		return true;
	/* An id prefix: at least 4 hex digits (--container's own check), of an engine's id. */
	n = strlen(want);
	return n >= 4 && strlen(p->container) == CONTAINER_ID_LEN && all_hex(want, n) &&
	       !strncmp(p->container, want, n);
}
