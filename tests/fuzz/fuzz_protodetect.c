// SPDX-License-Identifier: MIT
/*
 * --protocol=auto's readers (session/protodetect.c): a target's version
 * file, its maps lines (proc/procmaps.c), the library paths in them. First
 * byte: which.
 */
#include "fuzz.h"
#include "proc/procmaps.h"
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
	case 1:
		if (procmaps_line_path(t, out, sizeof(out)) == 0)
			FUZZ_CHECK(fuzz_terminated(out, sizeof(out)));
		fuzz_ignore(procmaps_line_executable(t));
		break;
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
