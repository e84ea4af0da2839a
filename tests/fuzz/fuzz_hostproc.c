// SPDX-License-Identifier: MIT
/*
 * /proc/<pid>/io and /proc/<pid>/net/dev lines (shared/procnet.c; the samples and the agent's netCard), as
 * the disk and network samples read them; interface names are chosen by
 * whoever holds CAP_NET_ADMIN in the target's network namespace. First
 * byte even: io text; odd: one net/dev line. The rest is copied to a
 * buffer of exactly its size (no NUL: the parsers take a length).
 */
#include <errno.h>

#include "fuzz.h"
#include "hostdata/hostfmt.h"
#include "shared/procnet.h"

static void netdev(const char *s, size_t n)
{
	struct hostproc_netdev d, back;
	char line[HOSTFMT_LINE_MAX];
	size_t len;
	int w;

	if (hostproc_parse_netdev(s, n, &d))
		return;
	len = strnlen(d.name, sizeof(d.name));
	FUZZ_CHECK(len >= 1 && len < sizeof(d.name));
	/* What is taken is one word msprof can split, and is written whole. */
	w = hostfmt_net_line(line, sizeof(line), d.name, d.v);
	FUZZ_CHECK(w > 0 && line[0] == ' ' && line[w - 1] == '\n');
	FUZZ_CHECK(hostproc_parse_netdev(line, (size_t)w - 1, &back) == 0);
	FUZZ_CHECK(!strcmp(back.name, d.name) && !memcmp(back.v, d.v, sizeof(d.v)));
}

static void io(const char *s, size_t n)
{
	char line[HOSTFMT_LINE_MAX];
	uint64_t r, w;

	if (hostproc_parse_io(s, n, &r, &w))
		return;
	FUZZ_CHECK(hostfmt_disk_row(line, sizeof(line), 0, 1, 0, r, w, HOSTFMT_IO_UNKNOWN, 20000000,
				    "x") > 0);
	FUZZ_CHECK(strchr(line, '\n') == line + strlen(line) - 1);
	/* Any iowait (the parsed counters as one): a row of 13 words, io at most 99.99. */
	FUZZ_CHECK(hostfmt_disk_row(line, sizeof(line), 0, 1, 0, r, w, (r ^ w) & (UINT64_MAX >> 1),
				    20000000, "x") > 0);
	FUZZ_CHECK(strchr(line, '\n') == line + strlen(line) - 1);
	FUZZ_CHECK(strstr(line, " B/s 0.00 % ") &&
		   strtod(strstr(line, " B/s 0.00 % ") + 12, NULL) <= 99.99);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	if (!size)
		return 0;
	s = malloc(size - 1 ? size - 1 : 1);
	if (!s)
		abort();
	memcpy(s, data + 1, size - 1);
	if (data[0] & 1)
		netdev(s, size - 1);
	else
		io(s, size - 1);
	free(s);
	return 0;
}
