/* SPDX-License-Identifier: MIT */
/* Which container a process runs in, from its cgroup path (see container.c). */
#ifndef DYNPROF_CONTAINER_H
#define DYNPROF_CONTAINER_H

#include <stdbool.h>
#include <stddef.h>

#include "model/pm_proc.h"

/*
 * --container=WANT: true when `p` runs in that container, named by its name
 * (container_name: docker's, podman's, "<namespace>/<pod>", runc's id), its
 * whole id, or a prefix of at least 4 hex digits of its 64-hex id. NULL
 * WANT: every process.
 */
bool pm_proc_in_container(const struct pm_proc *p, const char *want);

/* Pure helpers, for unit tests. */
/*
 * Container id from /proc/<pid>/cgroup text (docker, containerd, cri-o,
 * podman, kubepods; cgroup v1 and v2 layouts; see container.c): the full
 * 64-hex id, or the id runc/crun were given (a "runc-<id>.scope" or
 * "crun-<id>.scope", usually a name), cut to `len` - 1; "" when none (the
 * host).
 */
void procmodel_container_id(const char *cgroup_text, char *id, size_t len);
/*
 * A guess for a cgroup that procmodel_container_id does not name: "/<name>"
 * at the top (runc/crun's cgroupfs driver), alone or above systemd units
 * only; "" when the path is not of that form. Only a process in a pid
 * namespace of its own is taken to be in container <name> (procscan.c).
 */
void procmodel_container_guess(const char *cgroup_text, char *name, size_t len);

/* One line of /proc/<pid>/cgroup: "<hierarchy>:<controllers>:<path>" ("" controllers: v2). */
struct cgroup_line {
	const char *controllers, *path;
	size_t controllers_len, path_len;
};
/* The next line at *cursor (advanced past it); false at the end. NULL text: none. */
bool procmodel_cgroup_line(const char **cursor, struct cgroup_line *l);
/* procmodel_container_id and _guess for one path [path, path+n). */
void procmodel_container_id_in(const char *path, size_t n, char *id, size_t len);
void procmodel_container_guess_in(const char *path, size_t n, char *name, size_t len);
/*
 * Rootless podman's id in [path, path+n): the deepest "libpod-<64 hex>"
 * (".scope" or not), else "". Only for the part of a path below a folder
 * that a user owns (cgowner.h): there no other engine's form is taken.
 */
void procmodel_rootless_id(const char *path, size_t n, char *id, size_t len);

#endif /* DYNPROF_CONTAINER_H */
