// SPDX-License-Identifier: MIT
/* The one meaning of --container, --user, --exe and the selectors (see match.h). */
#include <fnmatch.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/hostpw.h"
#include "model/container.h"
#include "model/match.h"
#include "ns/targetfs.h"
#include "proc/procfs.h"
#include "shared/decimal.h"

/* The uid user `name` has in the passwd file of p's own root, read with p's rights. */
static int uid_in_root(const struct pm_proc *p, const char *name, uid_t *uid)
{
	struct targetfs fs;
	char *text = NULL;
	size_t n;
	int err = targetfs_open(&fs, p->pid);

	if (err)
		return err;
	err = targetfs_read(&fs, "/etc/passwd", PROCFS_PASSWD_MAX, &text, &n);
	targetfs_close(&fs);
	if (!err)
		err = passwd_parse_uid(text, name, uid);
	free(text);
	return err;
}

/*
 * The host's name first: no file of the target read when it is the host's
 * user. Else p's own passwd, its uid as p's user namespace numbers it.
 */
bool match_user(const struct pm_proc *p, const char *want)
{
	uid_t named, inner;
	uint64_t uid;

	if (!decimal_u64(want, 0, UINT32_MAX - 1, &uid))
		return p->uid == (uid_t)uid;
	if (!hostpw_uid(want, &named) && named == p->uid)
		return true;
	return !procfs_inner_uid(p->pid, p->uid, &inner) && !uid_in_root(p, want, &named) &&
	       named == inner;
}

bool match_exe(const struct pm_proc *p, const char *glob)
{
	const char *base = strrchr(p->exe, '/');

	return p->exe[0] && (!fnmatch(glob, p->exe, 0) || !fnmatch(glob, base ? base + 1 : p->exe, 0));
}

bool match_selector(const struct pm_proc *p, const struct selector *sel)
{
	switch (sel->kind) {
	case SEL_ALL:
		return true;
	case SEL_PID:
		return p->pid == sel->pid;
	case SEL_CONTAINER:
		return pm_proc_in_container(p, sel->value);
	case SEL_USER:
		return match_user(p, sel->value);
	}
	return false;
}

static bool any_of(const struct pm_proc *p, const char *const *values, int n,
		   bool (*is)(const struct pm_proc *p, const char *v))
{
	for (int i = 0; i < n; i++)
		if (is(p, values[i]))
			return true;
	return n == 0;
}

bool match_filters(const struct options *o, const struct pm_proc *p)
{
	return any_of(p, o->containers, o->ncontainers, pm_proc_in_container) &&
	       any_of(p, o->exes, o->nexes, match_exe) && any_of(p, o->users, o->nusers, match_user);
}
