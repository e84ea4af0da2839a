// SPDX-License-Identifier: MIT
/* Selectors matched against the session's targets (see select.h). */
#include <stdio.h>

#include "common/errbuf.h"
#include "control/select.h"
#include "model/match.h"
#include "model/pm_proc.h"

/* What the matcher reads of a target, as the model's record holds it. */
static void as_proc(const struct session_target_info *t, struct pm_proc *p)
{
	p->pid = t->pid;
	p->uid = (uid_t)t->uid;
	snprintf(p->container, sizeof(p->container), "%s", t->container_id);
	snprintf(p->container_name, sizeof(p->container_name), "%s", t->container_name);
}

static bool matches(const struct session_target_info *t, const struct selector *sel)
{
	struct pm_proc p = { 0 };

	if (sel->kind == SEL_USER && !t->uid_known)
		return false;
	as_proc(t, &p);
	/* Its passwd's names as read at its join: nothing of the target read now, in the loop. */
	if (sel->kind == SEL_USER)
		return match_user_known(&p, sel->value, t->user_names);
	return match_selector(&p, sel);
}

int select_targets(const struct session *s, const struct selector *sel, bool *which, char *err,
		   size_t errlen)
{
	struct session_target_info info;
	int n = 0;

	for (int i = 0; i < session_target_count(s); i++) {
		which[i] = session_target_live(s, i) && matches(session_target_info(s, i, &info), sel);
		n += which[i];
	}
	if (!n)
		errbuf_set(err, errlen, "no target matches %s", sel->text[0] ? sel->text : "all");
	return n;
}
