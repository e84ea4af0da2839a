// SPDX-License-Identifier: MIT
/* Where a function's uprobe goes (probeplace.h): past an endbr64 only onto a push. */
#include "kernel/probeplace.h"
#include "unit.h"

#if defined(__x86_64__)
TEST(endbr64_then_push_is_probed_at_the_push)
{
	static const uint8_t rbp[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48 };
	static const uint8_t r15[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x41, 0x57 };
	static const uint8_t rbx[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x53 };

	CHECK_INT(probeplace_skip(rbp, sizeof(rbp)), 4);
	CHECK_INT(probeplace_skip(r15, sizeof(r15)), 4);
	CHECK_INT(probeplace_skip(rbx, sizeof(rbx)), 4);
}

TEST(anything_else_is_probed_at_its_first_instruction)
{
	static const uint8_t push[] = { 0x55, 0x48, 0x89, 0xe5 };
	static const uint8_t endbr_mov[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x8b, 0x05 };
	static const uint8_t endbr_rex_mov[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x41, 0x8b };
	static const uint8_t endbr_ret[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0xc3 };
	static const uint8_t rip_mov[] = { 0x8b, 0x05, 0, 0, 0, 0 };

	CHECK_INT(probeplace_skip(push, sizeof(push)), 0);
	CHECK_INT(probeplace_skip(endbr_mov, sizeof(endbr_mov)), 0);
	CHECK_INT(probeplace_skip(endbr_rex_mov, sizeof(endbr_rex_mov)), 0);
	CHECK_INT(probeplace_skip(endbr_ret, sizeof(endbr_ret)), 0);
	CHECK_INT(probeplace_skip(rip_mov, sizeof(rip_mov)), 0);
}

TEST(a_function_too_short_to_hold_the_push_is_not_moved)
{
	static const uint8_t rbp[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x55 };
	static const uint8_t r15[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x41, 0x57 };

	CHECK_INT(probeplace_skip(rbp, 4), 0); /* st_size 4: the push is another function's */
	CHECK_INT(probeplace_skip(r15, 5), 0);
	CHECK_INT(probeplace_skip(rbp, 0), 0);
}
#else
TEST(other_architectures_keep_the_first_instruction)
{
	static const uint8_t code[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x55 };

	CHECK_INT(probeplace_skip(code, sizeof(code)), 0);
}
#endif

UNIT_MAIN()
