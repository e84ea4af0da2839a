// SPDX-License-Identifier: MIT
/* A process's command line (see proctitle.h). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "common/proctitle.h"

/* Field `want` (1-based, as proc(5) numbers them) of /proc/self/stat. */
static int stat_field(const char *stat, size_t n, int want, unsigned long *v)
{
	const char *p = memrchr(stat, ')', n), *end = stat + n;
	int field = 2; /* the comm field ends at the last ')' */

	if (!p)
		return -EINVAL;
	for (p++; p < end && field < want; p++)
		if (*p == ' ')
			field++;
	if (field != want || p >= end || *p < '0' || *p > '9')
		return -EINVAL;
	for (*v = 0; p < end && *p >= '0' && *p <= '9'; p++)
		*v = *v * 10 + (unsigned long)(*p - '0');
	return 0;
}

/*
 * Where the kernel reads the command line from: the argument area (fields
 * 48 and 49 of /proc/self/stat), and the environment area after it (50, 51).
 */
static int areas(unsigned long *arg_start, unsigned long *arg_end, unsigned long *env_end)
{
	char stat[1024];
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	unsigned long env_start;
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, stat, sizeof(stat));
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -EINVAL;
	if (stat_field(stat, (size_t)n, 48, arg_start) || stat_field(stat, (size_t)n, 49, arg_end) ||
	    stat_field(stat, (size_t)n, 50, &env_start) ||
	    stat_field(stat, (size_t)n, 51, env_end) || *arg_end <= *arg_start)
		return -EINVAL;
	/* The environment is usable only right after the arguments, as the kernel lays them. */
	if (env_start != *arg_end || *env_end < env_start)
		*env_end = *arg_end;
	return 0;
}

int proctitle_set(const char *title)
{
	unsigned long arg_start, arg_end, end;
	size_t len = strlen(title);
	int rc = areas(&arg_start, &arg_end, &end);

	if (rc)
		return rc;
	/*
	 * Overwritten in place, the rest NUL-filled. A title longer than the
	 * arguments runs on into the environment (this process reads it no
	 * more): the kernel then finds no NUL at the arguments' end and reads on
	 * to the first one, as for setproctitle(3).
	 */
	len = len < end - arg_start - 1 ? len : end - arg_start - 1;
	memset((char *)arg_start, 0, end - arg_start);
	memcpy((char *)arg_start, title, len);
	return 0;
}
