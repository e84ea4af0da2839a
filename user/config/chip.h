/* SPDX-License-Identifier: MIT */
/*
 * Which chip the targets run on, found as msprof finds it: the driver's
 * halGetDeviceInfo(device 0, MODULE_TYPE_SYSTEM, INFO_TYPE_VERSION), bits
 * 8..15, from libascend_hal.so located through /etc/ascend_install.info
 * and loaded only when it is there; else the `platform_version` of a
 * finished PROF_ folder's info.json in the result folder; else --chip.
 *
 * The driver library is code run inside dynprof (often as root): it is
 * loaded only from a regular file owned by root or by the user running
 * dynprof, writable by nobody else.
 *
 * Errors: convention 2 of docs/ERRORS.md (negative errno, the reason in
 * the caller's buffer); chip_detect never fails, it says what it tried.
 */
#ifndef DYNPROF_CHIP_H
#define DYNPROF_CHIP_H

#include <limits.h>
#include <stddef.h>

#include "config/pmu.h"
#include "shared/compiler.h"

#define CHIP_INSTALL_INFO "/etc/ascend_install.info"

struct chip_found {
	const struct chip_info *chip; /* NULL: not found */
	char why[3 * PATH_MAX];       /* when NULL: what was tried */
	char note[3 * PATH_MAX];      /* when found: a disagreement worth a warning, else "" */
};

void chip_detect(const char *option, const char *output, struct chip_found *f);

/*
 * The chip number the driver reports. 0, -ENOENT (no install info or
 * library), -EPERM (library not trusted), -ENOSYS (no halGetDeviceInfo),
 * -EIO (the call failed); `why` says which.
 */
int chip_from_driver(const char *install_info, int *id, char *why, size_t len) DP_MUST_CHECK;

/*
 * The platform_version of the newest PROF_ folder under `dir` with one:
 * 0, `where` naming that folder; or -ENOENT, `where` saying what was seen
 * (no folder, no PROF_ folder, or how many PROF_ folders named no chip).
 */
int chip_from_prof_dirs(const char *dir, int *id, char *where, size_t len) DP_MUST_CHECK;

#endif /* DYNPROF_CHIP_H */
