// SPDX-License-Identifier: MIT
/* probeplace.h: which instruction of a function's entry to probe. */
#include <string.h>

#include "kernel/probeplace.h"

static const uint8_t endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };

/* push %reg (50+r), or with a REX.B prefix push %r8-%r15 (41 50+r). */
static int is_push(const uint8_t *code, size_t n)
{
	if (n >= 1 && code[0] >= 0x50 && code[0] <= 0x57)
		return 1;
	return n >= 2 && code[0] == 0x41 && code[1] >= 0x50 && code[1] <= 0x57;
}

size_t probeplace_skip(const uint8_t *code, size_t n)
{
#if defined(__x86_64__)
	if (n >= sizeof(endbr64) && !memcmp(code, endbr64, sizeof(endbr64)) &&
	    is_push(code + sizeof(endbr64), n - sizeof(endbr64)))
		return sizeof(endbr64);
#else
	(void)code;
	(void)n;
#endif
	return 0;
}
