/* SPDX-License-Identifier: MIT */
/*
 * Rootless podman on a cgroup v1 host: podman gives the container no
 * cgroup of its own (it stays in its caller's), so nothing root made names
 * it (cgowner.h). What does: its monitor. conmon is the parent of the
 * container's first process, outside the container's pid namespace, and
 * its argv holds the container's id ("-c <64 hex>" / "--cid").
 *
 * All of it is the user's doing: any user can run a process called
 * conmon with any argv, above any process of theirs. So the name can only
 * be a claim about the user's own processes, and says whose it is: it is
 * taken only for a process in a user namespace the user made (its
 * outermost user namespace below dynprof's is owned by that user, not
 * root), whose conmon runs as that user in a user namespace of that
 * user's too; and it is "<name>@<uid>" as rootless names on cgroup v2 are
 * (procscan.c). No process of another user is in a user namespace a user
 * made (entering one needs its capabilities; only the user's own and
 * subordinate ids are mapped in it), so no one else's is labelled.
 */
#ifndef DYNPROF_CONMON_H
#define DYNPROF_CONMON_H

#include <stddef.h>
#include <sys/types.h>

#include "shared/compiler.h"

/*
 * The uid owning the outermost user namespace of the process whose /proc
 * folder is `piddir`, below dynprof's own (the user who made it, as
 * dynprof's namespace sees them). 0 with *owner set; -ENOENT when the
 * process is in dynprof's own user namespace; else a negative errno.
 */
int userns_owner(int piddir, uid_t *owner) DP_MUST_CHECK;

/*
 * Pure: the container id in a conmon's argv ([argv, argv+n), NUL
 * separated): argv[0] is conmon (any folder), and "-c ID", "-cID",
 * "--cid ID" or "--cid=ID" gives a 64-hex ID. 0 with `id` set, else
 * -ENOENT (id "").
 */
int conmon_argv_id(const char *argv, size_t n, char *id, size_t len) DP_MUST_CHECK;

#endif /* DYNPROF_CONMON_H */
