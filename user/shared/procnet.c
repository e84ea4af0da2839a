// SPDX-License-Identifier: MIT
/* The /proc text of the disk and network samples (see procnet.h). */
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "shared/procnet.h"

/* A decimal at p (before end) that fits 64 bits; where it ends in *next. */
static int decimal(const char *p, const char *end, uint64_t *v, const char **next)
{
	uint64_t n = 0;
	const char *s = p;

	for (; p < end && isdigit((unsigned char)*p); p++) {
		unsigned d = (unsigned)(*p - '0');

		if (n > (UINT64_MAX - d) / 10)
			return -EINVAL;
		n = n * 10 + d;
	}
	if (p == s)
		return -EINVAL;
	*v = n;
	*next = p;
	return 0;
}

static const char *blanks(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

/* One "key: <decimal>" line of /proc/<pid>/io into *v; 1 when it is `key`'s. */
static int io_line(const char *p, const char *end, const char *key, uint64_t *v, int *seen)
{
	size_t k = strlen(key);
	const char *q;

	if ((size_t)(end - p) <= k || memcmp(p, key, k) || p[k] != ':')
		return 0;
	if (*seen || decimal(blanks(p + k + 1, end), end, v, &q) || blanks(q, end) != end)
		return -EINVAL;
	*seen = 1;
	return 1;
}

int hostproc_parse_io(const char *text, size_t len, uint64_t *read_bytes, uint64_t *write_bytes)
{
	const char *p = text, *end = text + len;
	int have_r = 0, have_w = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end;

		if (io_line(p, e, "read_bytes", read_bytes, &have_r) < 0 ||
		    io_line(p, e, "write_bytes", write_bytes, &have_w) < 0)
			return -EINVAL;
		p = nl ? nl + 1 : end;
	}
	return have_r && have_w ? 0 : -EINVAL;
}

int hostproc_parse_netdev(const char *line, size_t len, struct hostproc_netdev *d)
{
	const char *end = line + len, *p = blanks(line, end), *name = p;
	size_t n;

	while (p < end && isgraph((unsigned char)*p) && *p != ':')
		p++;
	n = (size_t)(p - name);
	if (!n || n >= sizeof(d->name) || p == end || *p != ':')
		return -EINVAL;
	memcpy(d->name, name, n);
	d->name[n] = '\0';
	p++;
	for (int i = 0; i < HOSTPROC_NETDEV_NUMS; i++) {
		const char *q = blanks(p, end);

		if (q == p && i) /* numbers are separated by blanks */
			return -EINVAL;
		if (decimal(q, end, &d->v[i], &p))
			return -EINVAL;
	}
	/* Later numbers, if any, are decimals too: a line is taken whole or not at all. */
	while ((p = blanks(p, end)) < end) {
		uint64_t ignored;

		if (p[-1] != ' ' && p[-1] != '\t')
			return -EINVAL;
		if (decimal(p, end, &ignored, &p))
			return -EINVAL;
	}
	return 0;
}
