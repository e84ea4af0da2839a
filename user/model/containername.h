/* SPDX-License-Identifier: MIT */
/*
 * A container's name, from the state its engine keeps on the host, read
 * without asking the engine's daemon (which may not run, or not be ours to
 * ask):
 *
 *   docker      <root>/containers/<id>/config.v2.json, "Name" ("/trainjob")
 *               root: $DYNPROF_DOCKER_ROOT, else /var/lib/docker
 *   nerdctl     the file of its names folder that holds the id
 *               (engine_conf.h)
 *   podman      <graphroot>/<driver>-containers/containers.json, the
 *               "names" of the entry whose "id" is <id> (containers/
 *               storage, which podman and cri-o share; graphroot and
 *               driver: engine_conf.h); rootless podman: the store of the
 *               user whose cgroup folder (or conmon, conmon.h) holds the
 *               container, as that user's storage.conf names it, read
 *               with that user's rights
 *   Kubernetes  the OCI config.json of the container's bundle, annotations
 *               io.kubernetes.cri.sandbox-namespace / sandbox-name
 *               (containerd: $DYNPROF_CONTAINERD_STATE, else /run/containerd,
 *               io.containerd.runtime.v2.task/k8s.io/<id>/config.json) or
 *               io.kubernetes.pod.namespace / pod.name (cri-o:
 *               /run/containers/storage/overlay-containers/<id>/userdata/
 *               config.json); the name is "<namespace>/<pod>"
 *
 * Every one of these files is read as hostile (a rootless user owns hers):
 * opened inside its root folder without following a symlink at the end,
 * regular files only, non-blocking, at most CONTAINER_STATE_MAX bytes,
 * parsed with cJSON; a name with a byte outside printable ASCII, a '/'
 * (docker, podman) or longer than the field is dropped.
 *
 * The environment inside the container (KUBERNETES_SERVICE_HOST, HOSTNAME)
 * is not used: HOSTNAME is the pod's name only while the pod sets none of
 * its own, and it tells no namespace.
 */
#ifndef DYNPROF_CONTAINERNAME_H
#define DYNPROF_CONTAINERNAME_H

#include <stddef.h>
#include <sys/types.h>

#include "shared/compiler.h"

#define CONTAINER_STATE_MAX (8u << 20) /* a containers.json of thousands of containers */

/*
 * The name of container `id` (64 hex) from `source`'s state, "" when none
 * names it. Source 0: the engines' state (docker, containerd, cri-o, root
 * podman), files owned by root only; source U: user U's rootless podman
 * storage in U's home (as the host's passwd gives it), files owned by U or
 * root, for a container in a cgroup folder of U's own (cgowner.h). Answers are kept a while (a name found for good; none found for
 * a few seconds), so a scan of thousands of processes reads each file once.
 */
void container_name_lookup(const char *id, uid_t source, char *name, size_t len);

/* Pure parsers, for unit tests: 0 with `name` set, -ENOENT, -EINVAL. */
int container_name_from_docker(const char *json, char *name, size_t len) DP_MUST_CHECK;
int container_name_from_storage(const char *json, const char *id, char *name, size_t len) DP_MUST_CHECK;
int container_name_from_oci(const char *json, char *name, size_t len) DP_MUST_CHECK;

#endif /* DYNPROF_CONTAINERNAME_H */
