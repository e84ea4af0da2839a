/* SPDX-License-Identifier: MIT */
/*
 * Whether a process is one the user named: the one meaning of the filters
 * --container, --user and --exe (--pid=auto, --list, follow mode) and of
 * the selectors of start, stop and quit (config/rule.h) on the console, in
 * --commands and over --control.
 *
 *   container  as pm_proc_in_container (model/container.h): the engine's
 *              name (whole), the full id, or an id prefix of at least 4
 *              hex digits
 *   user       a number: the uid as the host sees it; a name: the host's
 *              name of that uid, or the name the process's own passwd
 *              file (its root's /etc/passwd, read with its rights) gives
 *              its uid in its user namespace: a container's users are its
 *              own
 *   exe        a glob (fnmatch) of the executable's full path or base name
 */
#ifndef DYNPROF_MATCH_H
#define DYNPROF_MATCH_H

#include <stdbool.h>

#include "config/options.h"
#include "config/rule.h"
#include "model/pm_proc.h"

/* --user=WANT or user=WANT. A name reads p's passwd (a helper for a foreign target, ns/targetfs.h). */
bool match_user(const struct pm_proc *p, const char *want);
/* The same: 1 it is, 0 it is not, a negative errno when its passwd could not be read for now. */
int match_user_answer(const struct pm_proc *p, const char *want);
/*
 * The same without reading: `names` are those p's own passwd gave its uid
 * when it was read before (a target's, at its join: procfs.h's
 * passwd_parse_names), "" unknown.
 */
bool match_user_known(const struct pm_proc *p, const char *want, const char *names);

/* --exe=GLOB. A process whose executable cannot be read matches no glob. */
bool match_exe(const struct pm_proc *p, const char *glob);

/* start/stop/quit SEL: all, pid= (host pid), container=, user=. */
bool match_selector(const struct pm_proc *p, const struct selector *sel);

/*
 * The filters of o: any value of one option, every option given (none
 * given: every process).
 */
bool match_filters(const struct options *o, const struct pm_proc *p);

/*
 * The same for a caller that may not wait (the follow loop): 1, 0, or a
 * negative errno, ask again later: -EINPROGRESS while a foreign target's
 * passwd is read beside the caller (its helper may be late: proc/pidmemo.h),
 * another when it could not be read for now. 1 and 0 are for good, until
 * the process execs.
 */
int match_filters_soon(const struct options *o, const struct pm_proc *p);

#endif /* DYNPROF_MATCH_H */
