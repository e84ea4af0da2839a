// SPDX-License-Identifier: MIT
/* /proc/<pid>/net/unix rows (sock/netunix.c): a line as the kernel prints it, any bytes. */
#include "fuzz.h"
#include "sock/netunix.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct netunix_row row;

	/* Not NUL-terminated on purpose: the parser takes a length. */
	if (netunix_parse_row((const char *)data, size, &row) == 0) {
		/* A path is a span of the line (an unbound socket's "" may be anywhere). */
		FUZZ_CHECK(row.path_len <= size);
		FUZZ_CHECK(row.path_len == 0 || (row.path >= (const char *)data &&
						 row.path + row.path_len <= (const char *)data + size));
		/* An abstract key is a short span of the path, after the prefix. */
		const char *key;
		size_t klen;

		if (netunix_abstract_key(&row, "dyn_prof_sock_", &key, &klen) == 0)
			FUZZ_CHECK(klen >= 1 && klen <= 16 && key >= row.path + 15 &&
				   key + klen == row.path + row.path_len);
	}
	return 0;
}
