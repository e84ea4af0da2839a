/* SPDX-License-Identifier: MIT */
/*
 * Where engines keep what names a container, beyond the fixed places
 * containername.c reads:
 *
 *   podman, cri-o  containers/storage keeps one containers.json per storage
 *                  driver: <graphroot>/<driver>-containers/containers.json
 *                  (overlay, vfs, btrfs, zfs, devmapper, aufs). The
 *                  graphroot and driver are those of storage.conf's
 *                  [storage] table ($DYNPROF_STORAGE_CONF, else
 *                  /etc/containers/storage.conf, read only when root owns
 *                  it), unless $DYNPROF_STORAGE_ROOT names the graphroot.
 *                  A graphroot given on podman's command line alone
 *                  (--root) is in no file: $DYNPROF_STORAGE_ROOT says it.
 *   rootless podman the same files in the user's own store: the graphroot of
 *                  the user's ~/.config/containers/storage.conf (which,
 *                  when it exists, podman reads instead of root's), else
 *                  root's storage.conf's rootless_storage_path, else
 *                  ~/.local/share/containers/storage; $HOME, $UID and $USER
 *                  in them are the user's (podman expands its environment,
 *                  which dynprof cannot see: any other variable names no
 *                  place). Every driver, the storage.conf's first.
 *   nerdctl        names a container by a file: <data root>/<hash of the
 *                  containerd address>/names/<namespace>/<name>, holding
 *                  the container's id ($DYNPROF_NERDCTL_ROOT, else
 *                  /var/lib/nerdctl; the folders and files root's, made
 *                  0700/0600 by nerdctl). The container's cgroup is
 *                  /<namespace>/<id> (cgroupfs) or nerdctl-<id>.scope
 *                  (systemd), the id 64 hex.
 *   containerd     `ctr run IMAGE ID` (and any client of containerd without
 *                  an engine id of 64 hex) puts the task in the cgroup
 *                  /<namespace>/<id> (cgroupfs); its bundle is
 *                  <state>/io.containerd.runtime.v2.task/<namespace>/<id>
 *                  ($DYNPROF_CONTAINERD_STATE, else /run/containerd). A
 *                  process in such a cgroup, whose bundle folder exists and
 *                  is root's, is in container "<namespace>/<id>".
 */
#ifndef DYNPROF_ENGINE_CONF_H
#define DYNPROF_ENGINE_CONF_H

#include <stddef.h>
#include <sys/types.h>

#include "shared/compiler.h"

#define ENGINE_CONF_MAX (64u * 1024) /* a storage.conf is a page of text */

struct storage_conf {
	char graphroot[4096];     /* "" when the file names none */
	char driver[32];          /* "" when the file names none */
	char rootless_path[4096]; /* rootless_storage_path: "" when none */
};

/* The user a rootless store is expanded for: $HOME, $UID, $USER. */
struct storage_user {
	const char *home, *name;
	uid_t uid;
};

/*
 * Pure: the [storage] table's graphroot, driver and rootless_storage_path
 * from storage.conf text (a path kept when absolute or starting with a
 * variable; a driver of lowercase letters and digits).
 */
void storage_conf_parse(const char *text, struct storage_conf *out);
/* root's storage.conf ($DYNPROF_STORAGE_CONF, else /etc/containers/storage.conf), when root's. */
void storage_conf_read(struct storage_conf *conf);
/*
 * Pure: a storage path with $HOME, $UID, $USER (or ${...}) of `u`
 * replaced. 0; -EINVAL for another variable, a result not absolute or with
 * a ".." component; -ENAMETOOLONG.
 */
int storage_path_expand(const char *path, const struct storage_user *u, char *out, size_t len) DP_MUST_CHECK;
/*
 * Pure: the i-th place (i = 0, 1, ...) rootless user `u`'s containers.json
 * may be, from the user's storage.conf `user` and root's `sys` (either all
 * ""): each graphroot (the user's, root's rootless_storage_path, the
 * default) with every driver. 0, or -ENOENT past the last.
 */
int rootless_place(int i, const struct storage_conf *user, const struct storage_conf *sys,
		   const struct storage_user *u, char *root, size_t rootlen, char *rel,
		   size_t rellen) DP_MUST_CHECK;

/*
 * The i-th place (i = 0, 1, ...) a containers.json naming root podman's
 * containers may be: `root` a graphroot, `rel` the file beneath it. 0, or
 * -ENOENT past the last. `dflt` is the graphroot when neither the
 * environment nor storage.conf names one.
 */
int storage_place(int i, const char *dflt, char *root, size_t rootlen, char *rel,
		  size_t rellen) DP_MUST_CHECK;

/*
 * containerd's "<namespace>/<id>" for cgroup text whose path is
 * /<namespace>/<id> with that task's bundle on the host; 0 with `name`
 * set, else -ENOENT (name "").
 */
int containerd_task_name(const char *cgroup_text, char *name, size_t len) DP_MUST_CHECK;

/* Pure, for unit tests: the "<namespace>/<id>" a cgroup text's path could be, else -ENOENT. */
int containerd_task_candidate(const char *cgroup_text, char *name, size_t len) DP_MUST_CHECK;

/*
 * nerdctl's name of container `id` (64 hex): the file beneath the data
 * root's names/<namespace>/ folders that holds it. 0 with `name` set, else
 * -ENOENT (name "").
 */
int nerdctl_name(const char *id, char *name, size_t len) DP_MUST_CHECK;
/*
 * Pure: name file `file` with text `text` names `id` (blanks around it
 * cut, as nerdctl reads it back): 0 with `name` = file; -EINVAL when the
 * file's name is not a containerd identifier; -ENOENT another id.
 */
int nerdctl_name_file(const char *file, const char *text, const char *id, char *name,
		      size_t len) DP_MUST_CHECK;

#endif /* DYNPROF_ENGINE_CONF_H */
