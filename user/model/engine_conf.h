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

#include "shared/compiler.h"

#define ENGINE_CONF_MAX (64u * 1024) /* a storage.conf is a page of text */

struct storage_conf {
	char graphroot[4096]; /* "" when the file names none */
	char driver[32];      /* "" when the file names none */
};

/* Pure: the [storage] table's graphroot and driver from storage.conf text. */
void storage_conf_parse(const char *text, struct storage_conf *out);

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

#endif /* DYNPROF_ENGINE_CONF_H */
