// SPDX-License-Identifier: MIT
/* mkdir -p (see user/shared/mkdirp.h). */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

#include "shared/mkdirp.h"

int mkdir_p(const char *path, mode_t mode)
{
	char buf[PATH_MAX];
	size_t len = strlen(path);

	if (len == 0)
		return -ENOENT; /* as mkdir(""); and the loop starts past the first byte */
	if (len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, len + 1);
	/* Each '/' after the first byte ends a folder to make; the end makes the last. */
	for (char *p = buf + 1;; p++) {
		char saved = *p;

		if (saved != '/' && saved != '\0')
			continue;
		*p = '\0';
		if (mkdir(buf, mode) < 0 && errno != EEXIST)
			return -errno;
		if (!saved)
			return 0;
		*p = saved;
	}
}
