// SPDX-License-Identifier: MIT
/*
 * A Unix address as getsockname returns it (sock/sockheld.c), any bytes:
 * the first byte picks the length the kernel says (it may exceed the
 * struct), the second the output size.
 */
#include <sys/un.h>

#include "fuzz.h"
#include "sock/sockheld.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_un a;
	char out[sizeof(a.sun_path) + 2];
	socklen_t len;
	size_t outlen;

	if (size < 2)
		return 0;
	len = data[0];
	outlen = 1 + data[1] % sizeof(out);
	memset(&a, 0, sizeof(a));
	memcpy(&a, data + 2, size - 2 < sizeof(a) ? size - 2 : sizeof(a));
	memset(out, 0x55, sizeof(out));
	if (sockheld_addr_text(&a, len, out, outlen) == 0) {
		/* NUL-terminated within outlen; an abstract name starts with '@'. */
		FUZZ_CHECK(memchr(out, '\0', outlen) != NULL);
		FUZZ_CHECK(strlen(out) <= sizeof(a.sun_path));
		FUZZ_CHECK(a.sun_path[0] != '\0' || out[0] == '@');
		FUZZ_CHECK(strlen(out) > 0);
	}
	return 0;
}
