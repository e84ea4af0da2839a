// SPDX-License-Identifier: MIT
/* Control files with ".done" sidecars, written whole (see ctlfile.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include "shared/ctlfile.h"

static int write_all(int fd, const char *data, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, data, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

/* dir/name via dir/.name.tmp and rename, so a reader never sees half a file. */
static int write_whole(const char *dir, const char *name, const char *data, size_t len)
{
	char tmp[PATH_MAX], final[PATH_MAX];
	int fd, rc;

	if (snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name) >= (int)sizeof(tmp) ||
	    snprintf(final, sizeof(final), "%s/%s", dir, name) >= (int)sizeof(final))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, CTLFILE_MODE);
	if (fd < 0)
		return -errno;
	rc = write_all(fd, data, len);
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, final) < 0)
		rc = -errno;
	if (rc)
		unlink(tmp);
	return rc;
}

int ctlfile_write(const char *dir, const char *name, const char *data, size_t len)
{
	char done_name[NAME_MAX + 1], done[64];
	int rc, n;

	rc = write_whole(dir, name, data, len);
	if (rc)
		return rc;
	if (snprintf(done_name, sizeof(done_name), "%s.done", name) >= (int)sizeof(done_name))
		return -ENAMETOOLONG;
	n = snprintf(done, sizeof(done), "filesize: %zu\n", len);
	return write_whole(dir, done_name, done, (size_t)n);
}
