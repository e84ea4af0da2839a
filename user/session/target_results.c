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

/* The helper's listing, whole (a found() that moves a folder talks to the same helper). */
static int list_all(struct fshelper *h, struct listing *l)
{
	int rc = fshelper_list(h, listed, l);

	return rc ? rc : l->rc;
}

static void listing_free(struct listing *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->names[i]);
	free(l->names);
	free(l->kinds);
}

/* The listing's wanted, unknown names, each told to found (known grows). */
static int tell_new(const struct listing *l, const char *inside, int names, char **known,
		    void (*found)(void *ctx, const char *name), void *ctx)
{
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < l->n; i++)
		rc = output_prof_entry(inside, l->names[i], l->kinds[i], names, known, found, ctx);
	return rc;
}

int target_results_scan(struct target *t, void (*found)(void *ctx, const char *name), void *ctx)
{
	struct listing l = { 0 };
	int rc;

	if (!t->fsh)
		return output_new_prof_dirs(t->result_host, target_prof_names(t), &t->prof_seen,
					    found, ctx);
	if (t->collect_head)
		return -EBUSY; /* its helper is a copy's, beside the loop: never two users at once */
	rc = list_all(t->fsh, &l);
	if (rc == 0)
		rc = tell_new(&l, t->result_inside, target_prof_names(t), &t->prof_seen, found, ctx);
	listing_free(&l);
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

static int move_by_helper(struct fshelper *h, const char *name, const char *output, const char *dst,
			  const struct fshelper_limits *lim, struct fshelper_copied *done)
{
	const char *last;
	int out = open_dst_parent(output, dst, &last), rc;

	if (out < 0)
		return out;
	rc = fshelper_copy(h, name, out, last, lim, done);
	close(out);
	if (rc)
		return rc;
	/* Copied: its source goes, as the target's user removes it (nothing else can go). */
	return fshelper_remove(h, name) ? 1 : 0;
}

int target_results_move(struct target *t, const char *name, const char *output, const char *dst,
			const struct fshelper_limits *lim, struct fshelper_copied *done)
{
	char src[PATH_MAX + 300], to[2 * PATH_MAX];

	memset(done, 0, sizeof(*done));
	if (t->fsh)
		return move_by_helper(t->fsh, name, output, dst, lim, done);
	if (t->result_fd < 0)
		return 0;
	snprintf(src, sizeof(src), "%s/%s", t->result_host, name);
	snprintf(to, sizeof(to), "%s/%s", output, dst);
	return copytree_move(src, to, lim->max_bytes);
}

/* One collection's folders, moved as the listing names them. */
struct moving {
	const struct results_collect *rc;
	char **known;
};

/*
 * A folder without host/end_info when its window was stopped and a next
 * START went out is the next window's, begun while this copy ran (the
 * stop's own folder has it: the server writes it before it answers): left
 * for the next look. With no START since, it is this window's, incomplete.
 */
static bool not_yet(const struct moving *m, const char *name)
{
	char path[PATH_MAX + NAME_MAX + 32], *text = NULL;
	size_t len;
	int rc;

	if (!m->rc->finished_only || !m->rc->next_started || !atomic_load(m->rc->next_started))
		return false;
	snprintf(path, sizeof(path), "%s/%s/host/end_info", m->rc->inside, name);
	rc = fshelper_read(m->rc->h, path, 4096, &text, &len);
	free(text);
	if (rc != -ENOENT)
		return false;
	output_prof_known_drop(m->known, name);
	return true;
}

static void move_found(void *ctx, const char *name)
{
	const struct results_collect *c = ((struct moving *)ctx)->rc;
	struct fshelper_copied copied;
	char dst[PATH_MAX];
	int rc;

	if (not_yet(ctx, name))
		return;
	memset(&copied, 0, sizeof(copied));
	snprintf(dst, sizeof(dst), "%s%s%s", c->sub, c->sub[0] ? "/" : "", name);
	rc = move_by_helper(c->h, name, c->output, dst, &c->lim, &copied);
	c->moved(c->ctx, name, dst, rc, &copied);
}

int target_results_collect(const struct results_collect *c, char **known)
{
	struct listing l = { 0 };
	struct moving m = { c, known };
	int rc = list_all(c->h, &l);

	if (rc == 0)
		rc = tell_new(&l, c->inside, c->names, known, move_found, &m);
	listing_free(&l);
	return rc;
}
