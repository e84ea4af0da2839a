// SPDX-License-Identifier: MIT
/* /proc/<pid>/stat lines (see user/common/procstat.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "common/procstat.h"
#include "shared/decimal.h"

/* The line holds 52 fields of at most 20 digits after a comm of at most 64 bytes. */
#define STAT_LINE_MAX 2048

/* The field that starts at *p (after blanks); *p moves past it. Its length, 0 at the end. */
static size_t next_field(const char **p, const char **field)
{
	const char *s = *p;
	size_t n = 0;

	while (*s == ' ')
		s++;
	while (s[n] && s[n] != ' ' && s[n] != '\n')
		n++;
	*field = s;
	*p = s + n;
	return n;
}

int procstat_parse(const char *text, struct procstat *st)
{
	const char *p = strrchr(text, ')'), *f;
	struct procstat out = { 0 };
	uint64_t v;
	size_t n;

	if (!p)
		return -EINVAL;
	p++;
	for (int field = 3; field <= 23; field++) {
		n = next_field(&p, &f);
		if (n == 0 && field < 23)
			return -EINVAL;
		if (n == 0)
			break; /* vsize: an old or a cut line may stop at 22 */
		if (field == 3)
			out.state = *f;
		else if (field == 9 && !decimal_span(f, n, 0, UINT_MAX, &v))
			out.flags = (unsigned)v;
		else if (field == 14 && !decimal_span(f, n, 0, UINT64_MAX, &v))
			out.utime = v;
		else if (field == 15 && !decimal_span(f, n, 0, UINT64_MAX, &v))
			out.stime = v;
		else if (field == 22 && !decimal_span(f, n, 0, UINT64_MAX, &v))
			out.start = v;
		else if (field == 23 && !decimal_span(f, n, 0, UINT64_MAX, &v))
			out.vsize = v;
		else if (field == 9 || field == 14 || field == 15 || field >= 22)
			return -EINVAL;
	}
	*st = out;
	return 0;
}

int procstat_read(const char *path, struct procstat *st)
{
	char buf[STAT_LINE_MAX];
	ssize_t len;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -ESRCH;
	do
		len = read(fd, buf, sizeof(buf) - 1);
	while (len < 0 && errno == EINTR);
	close(fd);
	if (len <= 0)
		return -ESRCH;
	buf[len] = '\0';
	return procstat_parse(buf, st);
}

bool procstat_dead(char state)
{
	return state == 'Z' || state == 'X' || state == 'x';
}
