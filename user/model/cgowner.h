/* SPDX-License-Identifier: MIT */
/*
 * Which part of a process's cgroup path root made, and so which container
 * names in it a user cannot have forged.
 *
 * systemd delegates a subtree to every user (user@UID.service: the folder
 * and its files are chowned to the user), and inside it the user makes any
 * folder: "runc-trainjob.scope", "docker-<id>.scope". A folder can only be
 * made in a folder one may write, and only root chowns, so a component of
 * the path was made by root (an engine, systemd's system manager, an
 * administrator) when every folder above it, from the hierarchy's root, is
 * owned by root and writable by no group or other. Below the first folder
 * that is not, everything is that folder owner's doing.
 *
 * The path is resolved in the real cgroup filesystem: the v2 hierarchy
 * through kernel/cgroot.h (a private mount of the host's root), a v1
 * hierarchy by a private mount with the line's controllers, else where
 * /proc/self/mountinfo shows it mounted at its root. A path that cannot be
 * resolved (a hierarchy not reachable, a path outside dynprof's cgroup
 * namespace, a folder gone) has no root-made part.
 */
#ifndef DYNPROF_CGOWNER_H
#define DYNPROF_CGOWNER_H

#include <stddef.h>
#include <sys/types.h>

#include "model/container.h"

struct cg_trust {
	size_t root_len; /* the path's first root_len bytes: components root made */
	uid_t owner;     /* the rest lies in a folder of this user's (not 0); 0: none */
};

/* Fill `t` for line `l` of /proc/<pid>/cgroup; 0, or negative errno (t: nothing trusted). */
int cgowner_check(const struct cgroup_line *l, struct cg_trust *t);
/*
 * The walk itself, from the hierarchy's root folder `root` (any folder: unit
 * tests): folder by folder while each one's parent is root's and writable
 * by no one else; stops at a folder that cannot be opened (0 or negative
 * errno, what was walked so far kept) and at "." or ".." (-EINVAL, nothing).
 */
int cgowner_walk(int root, const char *path, size_t n, struct cg_trust *t);

/*
 * The container of a process from its cgroup text, forgery aside: an
 * engine's id (container.h) in a root-made part, a runc/crun guess there
 * when `guess` (a pid namespace of its own), else rootless podman's id
 * below a user's folder, with *owner that user. "" and *owner 0: none.
 */
void cgowner_container(const char *cgroup_text, bool guess, char *id, size_t len, uid_t *owner);

#endif /* DYNPROF_CGOWNER_H */
