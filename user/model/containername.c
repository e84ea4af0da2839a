// SPDX-License-Identifier: MIT
/* Container names from the engines' state on the host (see containername.h). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/rootfile.h"
#include "common/hostpw.h"
#include "model/containername.h"
#include "model/engine_conf.h"
#include "proc/procfs.h"
#include "shared/array_size.h"
#include "shared/clock.h"

#define CACHE_SLOTS 64
#define MISS_KEEP_MS 3000 /* a container just started may have no state file yet */

struct cached {
	char id[72];
	uid_t source; /* 0: the engines' state; else that user's own (rootless podman) */
	char name[96];
	int64_t at_ms;
	bool found;
};

static struct cached cache[CACHE_SLOTS];
static unsigned cache_next;

/*
 * Printable ASCII, no '/' unless allowed, fits: else not a name we show
 * (no engine gives any other; it becomes a folder in --output).
 */
static int take_name(const char *v, bool slash_ok, char *name, size_t len)
{
	size_t n = v ? strlen(v) : 0;

	if (n == 0 || n >= len)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)v[i] < 0x21 || (unsigned char)v[i] >= 0x7f ||
		    (v[i] == '/' && !slash_ok))
			return -EINVAL;
	memcpy(name, v, n + 1);
	return 0;
}

static const char *string_of(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

int container_name_from_docker(const char *json, char *name, size_t len)
{
	cJSON *root = cJSON_Parse(json);
	const char *v = string_of(root, "Name");
	int rc;

	if (!root)
		return -EINVAL;
	if (v && v[0] == '/') /* docker keeps names with a leading '/' */
		v++;
	rc = v ? take_name(v, false, name, len) : -ENOENT;
	cJSON_Delete(root);
	return rc;
}

int container_name_from_storage(const char *json, const char *id, char *name, size_t len)
{
	cJSON *root = cJSON_Parse(json), *c;
	int rc = -ENOENT;

	if (!cJSON_IsArray(root)) {
		cJSON_Delete(root);
		return -EINVAL;
	}
	cJSON_ArrayForEach(c, root)
	{
		const char *cid = string_of(c, "id");
		const cJSON *names = cJSON_GetObjectItemCaseSensitive(c, "names");

		if (!cid || strcmp(cid, id))
			continue;
		/* The first name: podman's own; later ones are aliases. */
		if (cJSON_IsArray(names) && cJSON_IsString(cJSON_GetArrayItem(names, 0)))
			rc = take_name(cJSON_GetArrayItem(names, 0)->valuestring, false, name, len);
		break;
	}
	cJSON_Delete(root);
	return rc;
}

int container_name_from_oci(const char *json, char *name, size_t len)
{
	static const char *const keys[][2] = {
		{ "io.kubernetes.cri.sandbox-namespace", "io.kubernetes.cri.sandbox-name" }, /* containerd */
		{ "io.kubernetes.pod.namespace", "io.kubernetes.pod.name" }, /* cri-o */
	};
	cJSON *root = cJSON_Parse(json);
	const cJSON *ann = cJSON_GetObjectItemCaseSensitive(root, "annotations");
	int rc = root ? -ENOENT : -EINVAL;

	for (size_t i = 0; i < ARRAY_SIZE(keys) && rc == -ENOENT && cJSON_IsObject(ann); i++) {
		const char *ns = string_of(ann, keys[i][0]), *pod = string_of(ann, keys[i][1]);
		char a[96], b[96], both[200];

		if (!ns || !pod)
			continue;
		rc = -EINVAL;
		if (!take_name(ns, false, a, sizeof(a)) && !take_name(pod, false, b, sizeof(b))) {
			snprintf(both, sizeof(both), "%s/%s", a, b);
			rc = take_name(both, true, name, len);
		}
	}
	cJSON_Delete(root);
	return rc;
}

/*
 * `rel` inside the folder `root`, read as hostile (containername.h), and
 * only when root or `owner` owns it: an engine's state is written by root,
 * a rootless user's by that user; NULL when not readable or not theirs.
 */
static char *read_state(const char *root, const char *rel, uid_t owner)
{
	int rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW), fd;
	char *buf = NULL;
	struct stat st;
	size_t n;

	if (rootfd < 0)
		return NULL;
	fd = rootfile_open(rootfd, rel);
	close(rootfd);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || (st.st_uid != 0 && st.st_uid != owner) ||
	    rootfile_read(fd, CONTAINER_STATE_MAX, &buf, &n))
		buf = NULL;
	close(fd);
	return buf;
}

static const char *env_or(const char *var, const char *dflt)
{
	const char *v = getenv(var);

	return v && v[0] == '/' ? v : dflt;
}

typedef int (*parse_fn)(const char *json, const char *id, char *name, size_t len);

static int from_file(const char *root, const char *rel, uid_t owner, parse_fn parse, const char *id,
		     char *name, size_t len)
{
	char *json = read_state(root, rel, owner);
	int rc = json ? parse(json, id, name, len) : -ENOENT;

	free(json);
	return rc;
}

static int docker_parse(const char *json, const char *id, char *name, size_t len)
{
	(void)id;
	return container_name_from_docker(json, name, len);
}

static int oci_parse(const char *json, const char *id, char *name, size_t len)
{
	(void)id;
	return container_name_from_oci(json, name, len);
}

/*
 * The calling thread's filesystem rights become uid's (its primary group,
 * no supplementary groups): a rootless user's files are read as that user
 * could, so a symlink or a storage.conf of theirs reaches nothing of
 * anyone else's. Per thread (setfsuid and the raw setgroups call are), so
 * dynprof's other threads keep their rights. 0, or -EPERM (not switched).
 */
struct fs_rights {
	uid_t uid;
	gid_t gid;
	gid_t groups[64];
	int ngroups; /* -1: not saved; -2: nothing switched */
};

static void fs_restore(const struct fs_rights *saved);

static int fs_become(uid_t uid, gid_t gid, struct fs_rights *saved)
{
	saved->ngroups = -2;  /* nothing to give back */
	if (uid == geteuid()) /* a non-root dynprof, its own store: its own rights already */
		return 0;
	saved->uid = (uid_t)setfsuid((uid_t)-1);
	saved->gid = (gid_t)setfsgid((gid_t)-1);
	saved->ngroups = getgroups((int)ARRAY_SIZE(saved->groups), saved->groups);
	if (saved->ngroups < 0 || syscall(SYS_setgroups, 0, NULL))
		return -EPERM;
	setfsgid(gid);
	setfsuid(uid);
	/* setfsuid says nothing of a refusal: ask again. */
	if ((uid_t)setfsuid((uid_t)-1) != uid || (gid_t)setfsgid((gid_t)-1) != gid) {
		fs_restore(saved);
		return -EPERM;
	}
	return 0;
}

static void fs_restore(const struct fs_rights *saved)
{
	if (saved->ngroups == -2)
		return;
	setfsuid(saved->uid);
	setfsgid(saved->gid);
	if (saved->ngroups >= 0 && syscall(SYS_setgroups, (size_t)saved->ngroups, saved->groups)) {
		/* dropped a moment ago by the same thread: root is not refused them back */
	}
}

/* The user's own storage.conf, read as the user. */
static void user_storage_conf(const char *home, uid_t uid, struct storage_conf *conf)
{
	char *text = read_state(home, ".config/containers/storage.conf", uid);

	*conf = (struct storage_conf){ 0 };
	if (text && strlen(text) <= ENGINE_CONF_MAX)
		storage_conf_parse(text, conf);
	free(text);
}

/*
 * Rootless podman: the store the user's storage.conf, root's
 * rootless_storage_path or podman's default names (engine_conf.h), in
 * the home the host's passwd gives, read with the user's rights.
 */
static int rootless_storage(uid_t uid, const char *id, char *name, size_t len)
{
	char home[PATH_MAX], user[256], root[PATH_MAX + 64], rel[64];
	struct storage_conf mine, sys;
	struct storage_user u = { home, user, uid };
	struct fs_rights saved;
	gid_t gid;
	int rc = -ENOENT;

	if (uid == 0 || hostpw_home(uid, home, sizeof(home)) || home[0] != '/' ||
	    hostpw_name(uid, user, sizeof(user)) || hostpw_gid(uid, &gid))
		return -ENOENT;
	storage_conf_read(&sys); /* root's, read as root */
	if (fs_become(uid, gid, &saved))
		return -ENOENT;
	user_storage_conf(home, uid, &mine);
	for (int i = 0;
	     rc && !rootless_place(i, &mine, &sys, &u, root, sizeof(root), rel, sizeof(rel)); i++)
		rc = from_file(root, rel, uid, container_name_from_storage, id, name, len);
	fs_restore(&saved);
	return rc;
}

/* The engines, run by root: their state is root's. */
static int lookup_engines(const char *id, char *name, size_t len)
{
	char rel[PATH_MAX], root[PATH_MAX];

	snprintf(rel, sizeof(rel), "containers/%s/config.v2.json", id);
	if (!from_file(env_or("DYNPROF_DOCKER_ROOT", "/var/lib/docker"), rel, 0, docker_parse, id,
		       name, len))
		return 0;
	if (!nerdctl_name(id, name, len))
		return 0;
	snprintf(rel, sizeof(rel), "io.containerd.runtime.v2.task/k8s.io/%s/config.json", id);
	if (!from_file(env_or("DYNPROF_CONTAINERD_STATE", "/run/containerd"), rel, 0, oci_parse, id,
		       name, len))
		return 0;
	snprintf(rel, sizeof(rel), "overlay-containers/%s/userdata/config.json", id);
	if (!from_file(env_or("DYNPROF_STORAGE_RUNROOT", "/run/containers/storage"), rel, 0,
		       oci_parse, id, name, len))
		return 0;
	/* Any storage driver, the graphroot storage.conf names (engine_conf.h). */
	for (int i = 0;
	     !storage_place(i, "/var/lib/containers/storage", root, sizeof(root), rel, sizeof(rel)); i++)
		if (!from_file(root, rel, 0, container_name_from_storage, id, name, len))
			return 0;
	return -ENOENT;
}

/* By id and source: one user's containers.json names only that user's containers. */
static struct cached *cache_find(const char *id, uid_t source)
{
	for (size_t i = 0; i < CACHE_SLOTS; i++)
		if (cache[i].source == source && !strcmp(cache[i].id, id))
			return &cache[i];
	return NULL;
}

void container_name_lookup(const char *id, uid_t source, char *name, size_t len)
{
	struct cached *c;
	int64_t now = clock_ms();

	if (!len)
		return;
	name[0] = '\0';
	/* Only an engine's 64-hex id names a state folder: nothing else goes into a path. */
	if (strlen(id) != 64 || strspn(id, "0123456789abcdef") != 64)
		return;
	c = cache_find(id, source);
	if (!c || (!c->found && now - c->at_ms > MISS_KEEP_MS)) {
		if (!c) {
			c = &cache[cache_next++ % CACHE_SLOTS];
			snprintf(c->id, sizeof(c->id), "%s", id);
			c->source = source;
		}
		c->found = !(source ? rootless_storage(source, id, c->name, sizeof(c->name)) :
				      lookup_engines(id, c->name, sizeof(c->name)));
		if (!c->found)
			c->name[0] = '\0';
		c->at_ms = now;
	}
	snprintf(name, len, "%s", c->name);
}
