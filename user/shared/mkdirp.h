/* SPDX-License-Identifier: MIT */
/* mkdir -p, for the tool's --output and the agent's result_dir. */
#ifndef DYNPROF_MKDIRP_H
#define DYNPROF_MKDIRP_H

#include <sys/types.h>
#include "shared/compiler.h"

/*
 * Make `path` and the folders above it that are missing, each with `mode`
 * (less the umask). A part that exists already is fine, whatever it is: a
 * file in the way shows up when the caller uses the path. Returns 0,
 * -ENOENT for "", -ENAMETOOLONG at PATH_MAX or more, or the negative errno
 * of the mkdir that failed.
 */
int mkdir_p(const char *path, mode_t mode) DP_MUST_CHECK;

#endif /* DYNPROF_MKDIRP_H */
