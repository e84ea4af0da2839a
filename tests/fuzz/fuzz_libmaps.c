// SPDX-License-Identifier: MIT
/* /proc/<pid>/maps as kernel/libmaps.c scans it for a library: any text. */
#include "fuzz.h"
#include "kernel/libmaps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct libmaps_hit hit;
	FILE *f;

	if (!size)
		return 0;
	f = fmemopen((void *)data, size, "r");
	if (!f)
		return 0;
	if (libmaps_scan(f, 1, "libascendcl.so", &hit) == 0) {
		FUZZ_CHECK(fuzz_terminated(hit.path, sizeof(hit.path)));
		FUZZ_CHECK(fuzz_terminated(hit.host_path, sizeof(hit.host_path)));
	}
	fclose(f);
	{
		char *t = fuzz_cstr(data, size);

		(void)libmaps_name_matches("libascendcl.so", t);
		free(t);
	}
	return 0;
}
