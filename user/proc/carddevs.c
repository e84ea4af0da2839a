// SPDX-License-Identifier: MIT
/* Card nodes by device number (see carddevs.h). */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "proc/carddevs.h"

static void add_dev(struct card_devs *d, dev_t rdev, int index)
{
	if (carddevs_lookup(d, rdev) >= 0 || d->count >= DP_MAX_CARD_DEVS)
		return;
	d->devs[d->count].major = major(rdev);
	d->devs[d->count].minor = minor(rdev);
	d->devs[d->count].index = index;
	d->count++;
}

int carddevs_glob(struct card_devs *d, const struct card_patterns *p)
{
	d->count = 0;
	for (int i = 0; i < p->count; i++) {
		glob_t g;
		int rc = glob(p->glob[i], 0, NULL, &g);

		if (rc == GLOB_NOSPACE) {
			globfree(&g);
			return -ENOMEM;
		}
		/* GLOB_NOMATCH (or an unreadable folder): nothing to add. */
		for (size_t k = 0; rc == 0 && k < g.gl_pathc; k++) {
			struct stat st;
			int index = cards_match(p, g.gl_pathv[k]);

			if (index >= 0 && stat(g.gl_pathv[k], &st) == 0 && S_ISCHR(st.st_mode))
				add_dev(d, st.st_rdev, index);
		}
		globfree(&g);
	}
	return 0;
}

int carddevs_lookup(const struct card_devs *d, dev_t rdev)
{
	unsigned ma = major(rdev), mi = minor(rdev);

	for (int i = 0; i < d->count; i++)
		if (d->devs[i].major == ma && d->devs[i].minor == mi)
			return d->devs[i].index;
	return -1;
}

int carddevs_fd_index(const struct card_devs *d, const struct card_patterns *p, int fddir,
		      const char *name, const char *target)
{
	int by_name = cards_match(p, target), by_dev;
	struct stat st;

	/* "socket:[..]", "pipe:[..]", "anon_inode:..." are never device nodes. */
	if (d->count == 0 || target[0] != '/')
		return by_name;
	if (fstatat(fddir, name, &st, 0) < 0 || !S_ISCHR(st.st_mode))
		return by_name;
	by_dev = carddevs_lookup(d, st.st_rdev);
	return by_dev >= 0 ? by_dev : by_name;
}
