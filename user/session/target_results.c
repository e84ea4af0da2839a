// SPDX-License-Identifier: MIT
/* A target's result folder: looking in it, moving out of it (see target_results.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "results/copytree.h"
#include "results/output.h"
#include "ns/fshelper_wire.h"
#include "session/target_results.h"

/*
 * The helper's listing, kept whole before anything is done with it: a
 * found() that moves a folder talks to the same helper.
 */
struct listing {
	char **names;
	int *kinds;
	size_t n, cap;
	int rc;
};

static void listed(void *ctx, const char *name, int kind)
{
	struct listing *l = ctx;

	if (l->rc)
		return;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		char **names = realloc(l->names, cap * sizeof(*names));
		int *kinds = names ? realloc(l->kinds, cap * sizeof(*kinds)) : NULL;

		if (names)
			l->names = names;
		if (!names || !kinds) {
			l->rc = -ENOMEM;
			return;
		}
		l->kinds = kinds;
		l->cap = cap;
	}
	l->names[l->n] = strdup(name);
	if (!l->names[l->n]) {
		l->rc = -ENOMEM;
		return;
	}
	l->kinds[l->n++] = kind == FSH_KIND_DIR ? 0 : kind == FSH_KIND_SYMLINK ? -ELOOP : -ENOTDIR;
}

int target_results_scan(struct target *t, void (*found)(void *ctx, const char *name), void *ctx)
{
	struct listing l = { 0 };
	int rc;

	if (!t->fsh)
		return output_new_prof_dirs(t->result_host, target_prof_names(t), &t->prof_seen,
					    found, ctx);
	rc = fshelper_list(t->fsh, listed, &l);
	if (rc == 0)
		rc = l.rc;
	for (size_t i = 0; i < l.n; i++) {
		if (rc == 0)
			rc = output_prof_entry(t->result_inside, l.names[i], l.kinds[i],
					       target_prof_names(t), &t->prof_seen, found, ctx);
		free(l.names[i]);
	}
	free(l.names);
	free(l.kinds);
	return rc;
}

bool target_results_elsewhere(const struct target *t)
{
	return t->fsh || t->result_fd >= 0;
}

/* The folder holding dst's last part (made by target_output_subdir), and that part. */
static int open_dst_parent(const char *output, const char *dst, const char **last)
{
	char sub[PATH_MAX];
	const char *slash = strrchr(dst, '/');
	int out = open(output, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), fd;

	*last = slash ? slash + 1 : dst;
	if (out < 0 || !slash)
		return out < 0 ? -errno : out;
	snprintf(sub, sizeof(sub), "%.*s", (int)(slash - dst), dst);
	fd = openat(out, sub, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(out);
	return fd < 0 ? -errno : fd;
}

static int move_by_helper(struct target *t, const char *name, const char *output, const char *dst,
			  const struct fshelper_limits *lim, struct fshelper_copied *done)
{
	const char *last;
	int out = open_dst_parent(output, dst, &last), rc;

	if (out < 0)
		return out;
	rc = fshelper_copy(t->fsh, name, out, last, lim, done);
	close(out);
	if (rc)
		return rc;
	/* Copied: its source goes, as the target's user removes it (nothing else can go). */
	return fshelper_remove(t->fsh, name) ? 1 : 0;
}

int target_results_move(struct target *t, const char *name, const char *output, const char *dst,
			const struct fshelper_limits *lim, struct fshelper_copied *done)
{
	char src[PATH_MAX + 300], to[2 * PATH_MAX];

	memset(done, 0, sizeof(*done));
	if (t->fsh)
		return move_by_helper(t, name, output, dst, lim, done);
	if (t->result_fd < 0)
		return 0;
	snprintf(src, sizeof(src), "%s/%s", t->result_host, name);
	snprintf(to, sizeof(to), "%s/%s", output, dst);
	return copytree_move(src, to, lim->max_bytes);
}
