// SPDX-License-Identifier: MIT
/* Selectors matched against the session's targets (see select.h). */
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>

#include "common/errbuf.h"
#include "model/container.h"
#include "control/select.h"
#include "model/pm_proc.h"

/* As --container matches (pm_proc_in_container): name, full id, or an id prefix. */
static bool container_matches(const struct session_target_info *t, const char *want)
{
	struct pm_proc p = { 0 };

	snprintf(p.container, sizeof(p.container), "%s", t->container_id);
	snprintf(p.container_name, sizeof(p.container_name), "%s", t->container_name);
	return pm_proc_in_container(&p, want);
}

/* The uid a user= selector means: the number, or the name in the host's passwd. */
static int wanted_uid(const struct selector *sel, unsigned *uid, char *err, size_t errlen)
{
	struct passwd pw, *res = NULL;
	char buf[4096];
	int rc;

	if (sel->uid >= 0) {
		*uid = (unsigned)sel->uid;
		return 0;
	}
	rc = getpwnam_r(sel->value, &pw, buf, sizeof(buf), &res);
	if (!res)
		return errbuf_set(err, errlen, "no user named '%s' in the host's passwd%s%s",
				  sel->value, rc ? ": " : "", rc ? strerror(rc) : "");
	*uid = (unsigned)pw.pw_uid;
	return 0;
}

static bool matches(const struct session_target_info *t, const struct selector *sel, unsigned uid)
{
	switch (sel->kind) {
	case SEL_ALL:
		return true;
	case SEL_PID:
		return t->pid == sel->pid;
	case SEL_CONTAINER:
		return container_matches(t, sel->value);
	case SEL_USER:
		return t->uid_known && t->uid == uid;
	}
	return false;
}

int select_targets(const struct session *s, const struct selector *sel, bool *which, char *err,
		   size_t errlen)
{
	struct session_target_info info;
	unsigned uid = 0;
	int n = 0;

	if (sel->kind == SEL_USER && wanted_uid(sel, &uid, err, errlen))
		return -1;
	for (int i = 0; i < session_target_count(s); i++) {
		which[i] = session_target_live(s, i) && matches(session_target_info(s, i, &info), sel, uid);
		n += which[i];
	}
	if (!n)
		errbuf_set(err, errlen, "no target matches %s", sel->text[0] ? sel->text : "all");
	return n;
}
