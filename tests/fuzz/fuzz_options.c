// SPDX-License-Identifier: MIT
/*
 * The command line (config/options.c): options_parse and its checks over
 * an argv made from the input, split at NUL and newline bytes (at most
 * FUZZ_MAX_ARGS arguments; argv[0] is "dynprof"). Whoever writes a
 * launcher's or a job script's dynprof line controls it.
 *
 * What it promises: a refused line prints exactly one "[ERROR] " line and
 * owns nothing afterwards (nswitches 0: options_parse freed it); an
 * accepted one holds its counts inside their bounds, every switch with a
 * value, the application command inside argv, a timeout of 1 ms to 1 h.
 * The lines go to a memory stream in place of stdout (report.c prints
 * with printf), so the run stays quiet and the lines can be counted.
 */
#include <errno.h>

#include "fuzz.h"
#include "config/options.h"

#define FUZZ_MAX_ARGS 64

static int count_lines(const char *text, size_t len, const char *prefix)
{
	size_t plen = strlen(prefix);
	int n = 0;

	for (size_t i = 0; i < len; i++)
		if ((i == 0 || text[i - 1] == '\n') && len - i >= plen && !memcmp(text + i, prefix, plen))
			n++;
	return n;
}

static void check_accepted(const struct options *o, char **argv, int argc)
{
	FUZZ_CHECK(o->nswitches >= 0 && o->nswitches <= OPTIONS_MAX_SWITCHES);
	FUZZ_CHECK(o->ndevices >= 0 && o->ndevices <= OPTIONS_MAX_DEVICES);
	FUZZ_CHECK(o->nwindows >= 0 && o->nwindows <= OPTIONS_MAX_WINDOWS);
	for (int i = 0; i < o->nswitches; i++)
		FUZZ_CHECK(o->switches[i].option && o->switches[i].value);
	for (int i = 0; i < o->ndevices; i++)
		FUZZ_CHECK(o->devices[i] && o->devices[i][0] == '/');
	if (o->app_argv)
		FUZZ_CHECK(o->app_argv > argv && o->app_argv < argv + argc);
	FUZZ_CHECK(o->timeout_ms >= 1 && o->timeout_ms <= 3600 * 1000);
	FUZZ_CHECK(o->window_max_bytes >= 1);
	FUZZ_CHECK(o->dynamic >= -1 && o->dynamic <= 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[FUZZ_MAX_ARGS + 2], *buf = malloc(size + 1), *out = NULL;
	FILE *real = stdout, *mem;
	struct options o;
	size_t outlen = 0;
	int argc = 0, rc;

	if (!buf)
		abort();
	memcpy(buf, data, size);
	buf[size] = '\0';
	argv[argc++] = "dynprof";
	for (char *p = buf; argc <= FUZZ_MAX_ARGS && p <= buf + size;) {
		char *end = p;

		while (end < buf + size && *end && *end != '\n')
			end++;
		*end = '\0';
		argv[argc++] = p;
		p = end + 1;
	}
	argv[argc] = NULL;
	mem = open_memstream(&out, &outlen);
	if (!mem)
		abort();
	stdout = mem;
	rc = options_parse(argc, argv, &o);
	stdout = real;
	fclose(mem);
	if (rc == 0) {
		check_accepted(&o, argv, argc);
		options_free(&o);
		FUZZ_CHECK(count_lines(out, outlen, "[ERROR] ") == 0);
	} else {
		FUZZ_CHECK(rc == -EINVAL);
		FUZZ_CHECK(o.nswitches == 0); /* a refused line owns nothing */
		FUZZ_CHECK(count_lines(out, outlen, "[ERROR] ") == 1);
	}
	free(out);
	free(buf);
	return 0;
}
