// SPDX-License-Identifier: MIT
/* The one meaning of --container, --user, --exe and the selectors (see match.h). */
#include <errno.h>
#include <fnmatch.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/hostpw.h"
#include "common/rootfile.h"
#include "model/container.h"
#include "model/match.h"
#include "ns/targetfs.h"
#include "proc/pidmemo.h"
#include "proc/procfs.h"
#include "shared/clock.h"
#include "shared/decimal.h"

/* The uid user `name` has in the passwd file of pid's own root, read with its rights. */
static int uid_in_root(int pid, const char *name, uid_t *uid)
{
	struct targetfs fs;
	char *text = NULL;
	size_t n;
	int err = targetfs_open(&fs, pid);

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
 * A read that failed for good: no passwd file or no such name, one its user
 * may not read, not a regular file, too big, a target refused, or gone.
 * Any other failure (a helper late, killed or not made, no memory) is for
 * now: asked again.
 */
static bool for_good(int err)
{
	return err == -ENOENT || err == -EACCES || err == -ESRCH || err == -ELOOP ||
	       err == -EFBIG || err == -EPERM || err == -EINVAL || err == -ROOTFILE_ENOTREG;
}

/* Whether name is the user of pid (uid as the host sees it) in its own passwd: 1, 0, -errno for now. */
static int named_in_root(int pid, uid_t uid, const char *name)
{
	uid_t named, inner;
	int err = procfs_inner_uid(pid, uid, &inner);

	if (!err)
		err = uid_in_root(pid, name, &named);
	if (err)
		return for_good(err) ? 0 : err;
	return named == inner;
}

/* What the host alone says: 1 it is, 0 it is not, -1 only p's own passwd can say. */
static int user_by_host(const struct pm_proc *p, const char *want)
{
	uid_t named;
	uint64_t uid;

	if (!decimal_u64(want, 0, UINT32_MAX - 1, &uid))
		return p->uid == (uid_t)uid;
	if (!hostpw_uid(want, &named) && named == p->uid)
		return 1;
	return -1;
}

/*
 * The host's name first: no file of the target read when it is the host's
 * user. Else p's own passwd, its uid as p's user namespace numbers it.
 */
int match_user_answer(const struct pm_proc *p, const char *want)
{
	int by_host = user_by_host(p, want);

	return by_host >= 0 ? by_host : named_in_root(p->pid, p->uid, want);
}

bool match_user(const struct pm_proc *p, const char *want)
{
	return match_user_answer(p, want) == 1;
}

bool match_user_known(const struct pm_proc *p, const char *want, const char *names)
{
	int by_host = user_by_host(p, want);

	return by_host >= 0 ? by_host == 1 : passwd_names_have(names, want);
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

/*
 * --user's names that only a foreign target's passwd can answer, read
 * beside the loop (its helper may be stopped by its user), by (pid, start,
 * the option's list).
 */
static struct pidmemo users_read = PIDMEMO_INIT;

struct users_ask {
	struct pidmemo_key k;
	uid_t uid;
	const char *const *users;
	int nusers;
};

/* Any of the names in pid's passwd: 1, 0, or -errno for now. */
static int users_in_root(const struct users_ask *a)
{
	int last = 0;

	for (int i = 0; i < a->nusers; i++) {
		int r = user_by_host(&(struct pm_proc){ .uid = a->uid }, a->users[i]);

		r = r >= 0 ? r : named_in_root(a->k.pid, a->uid, a->users[i]);

		if (r == 1)
			return 1;
		last = r < 0 ? r : last;
	}
	return last;
}

/* A read that failed for now is tried again after this long (each try may make a helper). */
#define USERS_RETRY_MS 1000

struct users_answer {
	int r;      /* 1, 0; or the error of a read that failed for now */
	int64_t at; /* clock_ms() of that failure */
};

static void users_read_main(void *arg)
{
	const struct users_ask *a = arg;
	struct users_answer ans = { .r = users_in_root(a), .at = clock_ms() };

	pidmemo_put(&users_read, &a->k, ans.r < 0 ? ans.r : 0, &ans, sizeof(ans));
}

/* --user for a process the host did not settle: its own passwd, beside the caller when foreign. */
static int users_soon(const struct options *o, const struct pm_proc *p)
{
	struct users_ask a = {
		.k = { .pid = p->pid, .start = p->start_time, .tag = (unsigned)(uintptr_t)o->users },
		.uid = p->uid,
		.users = o->users,
		.nusers = o->nusers,
	};
	struct users_answer ans = { 0 };
	struct users_ask *copy;
	int err;

	if (!targetfs_foreign(p->pid))
		return users_in_root(&a);
	if (pidmemo_get(&users_read, &a.k, true, &err, &ans, sizeof(ans)) &&
	    (err == 0 || err == -EINPROGRESS || clock_ms() - ans.at < USERS_RETRY_MS))
		return err ? err : ans.r;
	copy = malloc(sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	*copy = a;
	return pidmemo_beside(&users_read, &a.k, users_read_main, copy);
}

int match_filters_soon(const struct options *o, const struct pm_proc *p)
{
	bool host_says_no = true;

	if (!any_of(p, o->containers, o->ncontainers, pm_proc_in_container) ||
	    !any_of(p, o->exes, o->nexes, match_exe))
		return 0;
	if (o->nusers == 0)
		return 1;
	for (int i = 0; i < o->nusers; i++) {
		int by_host = user_by_host(p, o->users[i]);

		if (by_host == 1)
			return 1;
		host_says_no = host_says_no && by_host == 0;
	}
	return host_says_no ? 0 : users_soon(o, p);
}
