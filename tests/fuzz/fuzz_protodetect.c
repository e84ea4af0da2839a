// SPDX-License-Identifier: MIT
/*
 * --protocol=auto's readers (session/protodetect.c): a target's version
 * file, its maps lines (kernel/libmaps.c, as proc/procmaps.c reads them), the library paths in them. First
 * byte: which.
 */
#include "fuzz.h"
#include "kernel/libmaps.h"
#include "session/protodetect.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char out[64], *t;

	if (size < 1)
		return 0;
	t = fuzz_cstr(data + 1, size - 1);
	switch (data[0] % 4) {
	case 0:
		if (protodetect_parse_version(t, out, sizeof(out)) >= 0) {
			FUZZ_CHECK(fuzz_terminated(out, sizeof(out)));
			fuzz_ignore(protodetect_for_version(out));
		}
		break;
	case 1: {
		struct libmaps_line m;

		/* the path is cut in place in t: no longer than t */
		if (libmaps_parse_line(t, &m))
			FUZZ_CHECK(m.path >= t && strlen(m.path) < size);
	} break;
	case 2:
		if (protodetect_toolkit_root(t, out, sizeof(out)) == 0)
			FUZZ_CHECK(fuzz_terminated(out, sizeof(out)));
		break;
	default:
		if (protodetect_path_arch(t, out, sizeof(out)) == 0)
			FUZZ_CHECK(fuzz_terminated(out, sizeof(out)));
		fuzz_ignore(protodetect_is_cann_lib(t));
		fuzz_ignore(protodetect_is_agent_lib(t));
		break;
	}
	free(t);
	return 0;
}
