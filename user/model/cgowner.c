// SPDX-License-Identifier: MIT
/* The part of a cgroup path that root made (see cgowner.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/mount.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kernel/cgroot.h"
#include "model/cgowner.h"

#define HIER_MAX 16         /* v1 hierarchies (a dozen controllers) and v2 */
#define CONTROLLERS_MAX 128 /* "cpu,cpuacct", "name=systemd" */
#define MOUNTINFO_LINE 4096

/* A hierarchy's root, opened once per run: fd, or negative errno when not reachable. */
struct hier {
	char controllers[CONTROLLERS_MAX];
	int fd;
};

static struct hier hiers[HIER_MAX];
static unsigned nhiers;

/* True when the comma list [list, list+n) holds `item` (k bytes). */
static bool list_has(const char *list, size_t n, const char *item, size_t k)
{
	const char *p = list, *end = list + n;

	while (p < end) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		const char *e = comma ? comma : end;

		if ((size_t)(e - p) == k && !memcmp(p, item, k))
			return true;
		p = comma ? comma + 1 : end;
	}
	return false;
}

/* Every item of `want` in `have` (both comma lists). */
static bool list_covers(const char *have, size_t hn, const char *want)
{
	const char *p = want;

	while (*p) {
		const char *comma = strchr(p, ',');
		size_t k = comma ? (size_t)(comma - p) : strlen(p);

		if (!list_has(have, hn, p, k))
			return false;
		p = comma ? comma + 1 : p + k;
	}
	return true;
}

/*
 * Where mountinfo shows the hierarchy mounted at its own root ("/": not a
 * container's view of a subtree). Fields: id parent dev root point opts
 * [optional...] - type source superopts.
 */
static int from_mountinfo(const char *controllers)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[MOUNTINFO_LINE];
	int fd = -ENOENT;

	while (f && fd < 0 && fgets(line, sizeof(line), f)) {
		char root[PATH_MAX], point[PATH_MAX], type[32], super[512];
		const char *dash = strstr(line, " - ");

		if (!dash || sscanf(line, "%*s %*s %*s %4095s %4095s", root, point) != 2 ||
		    sscanf(dash + 3, "%31s %*s %511s", type, super) != 2)
			continue;
		if (strcmp(root, "/") || strchr(point, '\\'))
			continue;
		if (controllers[0] ?
			    strcmp(type, "cgroup") || !list_covers(super, strlen(super), controllers) :
			    strcmp(type, "cgroup2"))
			continue;
		fd = open(point, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			fd = -errno;
	}
	if (f)
		fclose(f);
	return fd;
}

/* A v1 hierarchy mounted in no folder, by its controllers (the same set mounts the same hierarchy). */
static int v1_fsmount(const char *controllers)
{
#if defined(SYS_fsopen) && defined(SYS_fsmount) && defined(SYS_fsconfig)
	char list[CONTROLLERS_MAX], *save = NULL;
	bool plain = false;
	int fs, fd = 0;

	if (strlen(controllers) >= sizeof(list))
		return -EINVAL;
	fs = (int)syscall(SYS_fsopen, "cgroup", FSOPEN_CLOEXEC);
	if (fs < 0)
		return -errno;
	memcpy(list, controllers, strlen(controllers) + 1);
	for (char *c = strtok_r(list, ",", &save); c && !fd; c = strtok_r(NULL, ",", &save)) {
		bool named = !strncmp(c, "name=", 5);

		plain |= !named;
		if (syscall(SYS_fsconfig, fs, named ? FSCONFIG_SET_STRING : FSCONFIG_SET_FLAG,
			    named ? "name" : c, named ? c + 5 : NULL, 0) < 0)
			fd = -errno;
	}
	/* A named hierarchy with no controller is asked for with "none". */
	if (!fd && !plain && syscall(SYS_fsconfig, fs, FSCONFIG_SET_FLAG, "none", NULL, 0) < 0)
		fd = -errno;
	if (!fd && syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		fd = -errno;
	if (fd) {
		close(fs);
		return fd;
	}
	return cgroot_fsmount_root(fs, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
				   O_PATH);
#else
	(void)controllers;
	return -ENOSYS;
#endif
}

static int open_hier(const char *controllers)
{
	char why[256];
	int fd = controllers[0] ? v1_fsmount(controllers) : cgroot_open(why, sizeof(why));

	return fd >= 0 ? fd : from_mountinfo(controllers);
}

static int hier_root(const char *controllers, size_t n)
{
	struct hier *h;

	if (n >= CONTROLLERS_MAX || memchr(controllers, '\0', n))
		return -EINVAL;
	for (unsigned i = 0; i < nhiers; i++)
		if (strlen(hiers[i].controllers) == n && !memcmp(hiers[i].controllers, controllers, n))
			return hiers[i].fd;
	if (nhiers == HIER_MAX)
		return -ENOSPC;
	h = &hiers[nhiers++];
	memcpy(h->controllers, controllers, n);
	h->controllers[n] = '\0';
	h->fd = open_hier(h->controllers);
	return h->fd;
}

/* Root's own folder, which no one else may write in: what is made in it, root made. */
static bool root_made_parent(int dir, uid_t *owner)
{
	struct stat st;

	*owner = 0;
	if (fstat(dir, &st))
		return false;
	*owner = st.st_uid;
	return st.st_uid == 0 && !(st.st_mode & (S_IWGRP | S_IWOTH));
}

int cgowner_walk(int root, const char *path, size_t n, struct cg_trust *t)
{
	int dir = root, err = 0;
	size_t i = 0;

	t->root_len = 0;
	t->owner = 0;

	while (i < n && !err) {
		char name[NAME_MAX + 1];
		size_t start, k;
		uid_t owner;
		int next;

		while (i < n && path[i] == '/')
			i++;
		start = i;
		while (i < n && path[i] != '/')
			i++;
		k = i - start;
		if (k == 0)
			break;
		if (!root_made_parent(dir, &owner)) {
			t->owner = owner;
			break;
		}
		/* "/.." leads out of dynprof's cgroup namespace: nothing there is known. */
		if (k > NAME_MAX ||
		    (path[start] == '.' && (k == 1 || (k == 2 && path[start + 1] == '.')))) {
			t->root_len = 0;
			err = -EINVAL;
			break;
		}
		memcpy(name, path + start, k);
		name[k] = '\0';
		next = openat(dir, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			err = -errno;
			break;
		}
		if (dir != root)
			close(dir);
		dir = next;
		t->root_len = i;
	}
	if (dir != root)
		close(dir);
	return err;
}

int cgowner_check(const struct cgroup_line *l, struct cg_trust *t)
{
	int root = hier_root(l->controllers, l->controllers_len);

	t->root_len = 0;
	t->owner = 0;
	if (root < 0)
		return root;
	if (l->path_len == 0 || l->path[0] != '/')
		return -EINVAL;
	return cgowner_walk(root, l->path, l->path_len, t);
}

/* One pass over the lines: ids (engines', then rootless podman's) or runc/crun guesses. */
static void container_pass(const char *text, bool guesses, char *id, size_t len, uid_t *owner)
{
	const char *cursor = text;
	struct cgroup_line l;

	while (!id[0] && procmodel_cgroup_line(&cursor, &l)) {
		struct cg_trust t;

		/* Most processes are on the host: no folder is looked at for them. */
		(guesses ? procmodel_container_guess_in :
			   procmodel_container_id_in)(l.path, l.path_len, id, len);
		if (!id[0])
			continue;
		cgowner_check(&l, &t);
		(guesses ? procmodel_container_guess_in :
			   procmodel_container_id_in)(l.path, t.root_len, id, len);
		if (id[0] || guesses || !t.owner)
			continue;
		procmodel_rootless_id(l.path + t.root_len, l.path_len - t.root_len, id, len);
		if (id[0])
			*owner = t.owner;
	}
}

void cgowner_container(const char *cgroup_text, bool guess, char *id, size_t len, uid_t *owner)
{
	*owner = 0;
	if (!len)
		return;
	id[0] = '\0';
	container_pass(cgroup_text, false, id, len, owner);
	if (!id[0] && guess)
		container_pass(cgroup_text, true, id, len, owner);
}
