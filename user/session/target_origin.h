/* SPDX-License-Identifier: MIT */
/*
 * Who a target is, for the records of its windows: its container and its
 * command, read when it joins (a folder is often saved after the target,
 * and its container, are gone); and where its folders go in --output.
 *
 * Every process in a container is pid 1 (or another small pid) in its own
 * namespace, so the PROF_ folders moved out of containers all end in
 * _00000001...: each container's go to --output/<container>/ (its name,
 * else its id as docker ps shows it; a '/' of Kubernetes' <namespace>/<pod>
 * becomes '_'), so they neither mix nor need reading to be told apart.
 */
#ifndef DYNPROF_TARGET_ORIGIN_H
#define DYNPROF_TARGET_ORIGIN_H

#include <stddef.h>

#include "config/options.h"
#include "model/pm_proc.h"
#include "session/target_impl.h"
#include "shared/compiler.h"

/*
 * Fill t->container, t->command, the container's full id and name and the
 * uid from /proc (left ""/unknown when unreadable).
 */
void target_origin_read(struct target *t);
/* The same from what the process model read of it (its cmdline, uid, container). */
void target_origin_take(struct target *t, const struct pm_proc *p);

/*
 * Attach mode: t->cards of the `n` targets read from their fds now (the
 * card nodes globbed once for all of them); a target whose fds cannot be
 * read keeps 0.
 */
void target_origin_cards(struct target *const *ts, int n, const struct options *o);

/*
 * The folder, relative to `output`, where the PROF_ folders that dynprof
 * moves out of target t go: "" (--output itself) for a target on the host,
 * else its container's subfolder, made now if missing (0750) and refused
 * unless it is a real folder of ours (no symlink). 0 with `sub` set, or a
 * negative errno (`sub` then "").
 */
int target_output_subdir(const struct target *t, const char *output, char *sub, size_t len) DP_MUST_CHECK;

#endif /* DYNPROF_TARGET_ORIGIN_H */
