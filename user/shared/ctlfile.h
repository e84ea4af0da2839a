/* SPDX-License-Identifier: MIT */
/*
 * A PROF_ control file and its ".done" sidecar ("filesize: <N>"), which
 * CANN's tools read to know the file is complete. Each file appears whole
 * or not at all: written to a temporary name, then renamed.
 */
#ifndef DYNPROF_SHARED_CTLFILE_H
#define DYNPROF_SHARED_CTLFILE_H

#include <stddef.h>

#include "shared/compiler.h"

#define CTLFILE_MODE 0640

/* Write dir/name and dir/name.done. 0 or a negative errno. */
int ctlfile_write(const char *dir, const char *name, const char *data, size_t len) DP_MUST_CHECK;

#endif /* DYNPROF_SHARED_CTLFILE_H */
