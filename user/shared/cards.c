// SPDX-License-Identifier: MIT
/* Card node recognition (see user/shared/cards.h). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared/cards.h"
#include "shared/decimal.h"
#include "shared/array_size.h"

static char *const default_globs[] = {
	"/dev/davinci*",
	"/dev/nvidia*",
	"/dev/accel/accel*",
	"/dev/dri/renderD*",
};

void cards_default_patterns(struct card_patterns *p)
{
	p->count = (int)(ARRAY_SIZE(default_globs));
	for (int i = 0; i < p->count; i++)
		p->glob[i] = default_globs[i];
	p->storage = NULL;
}

int cards_parse_patterns(struct card_patterns *p, const char *list)
{
	char *save = NULL, *tok;

	p->count = 0;
	p->storage = strdup(list ? list : "");
	if (!p->storage)
		return -ENOMEM;
	for (tok = strtok_r(p->storage, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
		if (p->count == CARDS_MAX_PATTERNS) {
			cards_free_patterns(p);
			return -EINVAL;
		}
		p->glob[p->count++] = tok;
	}
	if (p->count == 0) {
		cards_free_patterns(p);
		return -EINVAL;
	}
	return 0;
}

void cards_free_patterns(struct card_patterns *p)
{
	free(p->storage);
	p->storage = NULL;
	p->count = 0;
}

/* The number that ends the node's name, or -1 when it ends otherwise. */
static int trailing_index(const char *path)
{
	const char *end = path + strlen(path), *digits = end;
	uint64_t v;

	while (digits > path && digits[-1] >= '0' && digits[-1] <= '9')
		digits--;
	if (end - digits > 6 || decimal_span(digits, (size_t)(end - digits), 0, 999999, &v))
		return -1;
	return (int)v;
}

int cards_match(const struct card_patterns *p, const char *path)
{
	for (int i = 0; i < p->count; i++)
		if (fnmatch(p->glob[i], path, FNM_PATHNAME) == 0)
			return trailing_index(path);
	return -1;
}

void cards_mask_text(unsigned long long mask, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; i < 64 && off < len; i++)
		if (mask & (1ULL << i))
			off += (size_t)snprintf(buf + off, len - off, "%s%d", off ? "," : "", i);
}

int cards_held_by_pid(const struct card_patterns *p, int pid)
{
	char dir[64], link[64 + 256 + 8], target[PATH_MAX];
	struct dirent *de;
	int best = -1;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", pid);
	d = opendir(dir);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		ssize_t n;
		int idx;

		if (de->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "%s/%s", dir, de->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		idx = cards_match(p, target);
		if (idx >= 0 && (best < 0 || idx < best))
			best = idx;
	}
	closedir(d);
	return best;
}

bool cards_named_like_one(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	for (size_t i = 0; i < ARRAY_SIZE(default_globs); i++) {
		const char *glob_base = strrchr(default_globs[i], '/') + 1;

		if (fnmatch(glob_base, base, 0) == 0)
			return true;
	}
	return false;
}
