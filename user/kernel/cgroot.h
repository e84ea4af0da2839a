/* SPDX-License-Identifier: MIT */
/*
 * An fd of the host's cgroup v2 root, for attaching a cgroup program to
 * every task (discover_bpf.c's device hook). The v2 hierarchy always
 * exists, even where nothing mounts it (v1-only or hybrid hosts, a
 * container's tmpfs over /sys/fs/cgroup), so it is mounted privately,
 * in this order:
 *   1. fsopen("cgroup2") + fsmount(): a mount in no folder, seen by no one
 *      (Linux 5.2+);
 *   2. mount(2) on a fresh folder under /tmp, the root opened, then the
 *      mount detached (MNT_DETACH) and the folder removed;
 *   3. /sys/fs/cgroup or /sys/fs/cgroup/unified as found, if cgroup2
 *      (when mounting is refused, e.g. by a seccomp filter).
 * A program attached through the fd stays attached once the mount is
 * gone: it holds the cgroup, not the mount.
 *
 * Errors: convention 2 of docs/ERRORS.md.
 */
#ifndef DYNPROF_CGROOT_H
#define DYNPROF_CGROOT_H

#include <stddef.h>

#include "shared/compiler.h"

/*
 * An O_RDONLY|O_DIRECTORY fd of the cgroup v2 root, or negative errno with
 * `why` saying what failed. Refused (-EXDEV) in a cgroup namespace other
 * than the initial one: its root is not the host's, and a program there would see
 * only that namespace's tasks.
 */
int cgroot_open(char *why, size_t why_len) DP_MUST_CHECK;

/*
 * In a cgroup namespace of its own (a Kubernetes pod's, `unshare -C`)
 * while the host's processes are visible (hostPID): join the initial
 * one, through the first process found in it, for the whole process. Then the device hook sees every task, and
 * `/proc/<pid>/cgroup` reads give the host's paths (container ids). Call
 * before any thread exists: setns changes only the calling thread.
 * 1 joined, 0 nothing to do or not possible here (not root, no process
 * of the initial namespace visible), negative errno when setns refused
 * (no CAP_SYS_ADMIN).
 */
int cgroot_join_host_ns(void) DP_MUST_CHECK;

/*
 * A configured filesystem context `fs` (fsopen, fsconfig ... CMD_CREATE)
 * mounted in no folder with mount attributes `attrs`, and its root opened
 * with `flags` (O_DIRECTORY and O_CLOEXEC added). Takes fs; the fd, or a
 * negative errno. The cgroup v2 root here, and model/cgowner.c's v1 lines.
 */
int cgroot_fsmount_root(int fs, unsigned int attrs, int flags) DP_MUST_CHECK;

#endif /* DYNPROF_CGROOT_H */
