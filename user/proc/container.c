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
 */
#include <stdio.h>
#include <string.h>

#include "proc/procmodel.h"
#include "shared/array_size.h"

#define CONTAINER_ID_LEN 64

static const char *const engine_prefixes[] = {
	"docker-",
	"cri-containerd-",
	"crio-",
	"libpod-",
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

/* The id inside one path component [s, s+n), or NULL. */
static const char *component_id(const char *s, size_t n)
{
	size_t k;

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

/* The deepest id in the path [p, end), or NULL. */
static const char *path_id(const char *p, const char *end)
{
	const char *found = NULL;

	while (p < end) {
		const char *slash = memchr(p, '/', (size_t)(end - p));
		const char *ce = slash ? slash : end;
		const char *id = component_id(p, (size_t)(ce - p));

		if (id)
			found = id;
		p = slash ? slash + 1 : end;
	}
	return found;
}

void procmodel_container_id(const char *cgroup_text, char *id, size_t len)
{
	const char *line = cgroup_text, *found = NULL;

	if (!id || len == 0)
		return;
	id[0] = '\0';
	if (!cgroup_text)
		return;
	/* All hierarchies of one process name the same container: the first wins. */
	while (*line && !found) {
		const char *eol = strchr(line, '\n');
		const char *end = eol ? eol : line + strlen(line);
		const char *c1 = memchr(line, ':', (size_t)(end - line));
		const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(end - c1 - 1)) : NULL;

		if (c2)
			found = path_id(c2 + 1, end);
		line = eol ? eol + 1 : end;
	}
	if (found)
		snprintf(id, len, "%.*s", CONTAINER_ID_LEN, found);
}
