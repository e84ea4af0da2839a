// SPDX-License-Identifier: MIT
/*
 * ELF symbol look-up (kernel/elfsym.c, libelf): the library a target maps
 * is a file its owner wrote. The input becomes a memfd, looked up by path.
 */
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "kernel/elfsym.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], err[256];
	struct elfsym sym;
	int fd = memfd_create("fuzz-elf", MFD_CLOEXEC);

	if (fd < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		err[0] = '\0';
		if (elfsym_find(path, "aclrtSetDevice", &sym, err, sizeof(err)) == 0)
			FUZZ_CHECK(sym.offset <= size);
		FUZZ_CHECK(fuzz_terminated(err, sizeof(err)));
	}
	close(fd);
	return 0;
}
