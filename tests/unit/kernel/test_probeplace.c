// SPDX-License-Identifier: MIT
/* Where a function's uprobe goes (probeplace.h): its first push, or its tail jump. */
#include "kernel/probeplace.h"
#include "unit.h"

#if defined(__x86_64__)
TEST(endbr64_then_push_is_probed_at_the_push)
{
	static const uint8_t rbp[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48 };
	static const uint8_t r15[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x41, 0x57 };
	static const uint8_t rbx[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x53 };

	CHECK_INT(probeplace_skip(rbp, sizeof(rbp), 0), 4);
	CHECK_INT(probeplace_skip(r15, sizeof(r15), 0), 4);
	CHECK_INT(probeplace_skip(rbx, sizeof(rbx), 0), 4);
}

TEST(anything_else_is_probed_at_its_first_instruction)
{
	static const uint8_t push[] = { 0x55, 0x48, 0x89, 0xe5 };
	static const uint8_t endbr_mov[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x8b, 0x05 };
	static const uint8_t endbr_rex_mov[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x41, 0x8b };
	static const uint8_t endbr_ret[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0xc3 };
	static const uint8_t rip_mov[] = { 0x8b, 0x05, 0, 0, 0, 0 };

	CHECK_INT(probeplace_skip(push, sizeof(push), 0), 0);
	CHECK_INT(probeplace_skip(endbr_mov, sizeof(endbr_mov), 0), 0);
	CHECK_INT(probeplace_skip(endbr_rex_mov, sizeof(endbr_rex_mov), 0), 0);
	CHECK_INT(probeplace_skip(endbr_ret, sizeof(endbr_ret), 0), 0);
	CHECK_INT(probeplace_skip(rip_mov, sizeof(rip_mov), 0), 0);
}

/* glibc 2.36's pthread_join: mov $1,%r8d; xor %ecx,%ecx; xor %edx,%edx; jmp __pthread_clockjoin_ex */
static const uint8_t pthread_join_code[] = { 0x41, 0xb8, 0x01, 0x00, 0x00, 0x00, 0x31, 0xc9,
					     0x31, 0xd2, 0xe9, 0x21, 0x00, 0x00, 0x00 };

TEST(a_tail_jump_ending_the_function_is_probed)
{
	const size_t n = sizeof(pthread_join_code);

	CHECK_INT(probeplace_skip(pthread_join_code, n, n), 10);
	CHECK(probeplace_emulated_at(pthread_join_code + 10, n - 10));
	CHECK(!probeplace_emulated_at(pthread_join_code, n));
	/* Not the last instruction (code may branch back before it), or the size unknown: the entry. */
	CHECK_INT(probeplace_skip(pthread_join_code, n, n + 7), 0);
	CHECK_INT(probeplace_skip(pthread_join_code, n, 0), 0);
}

TEST(plain_instructions_before_the_first_push_are_walked_over)
{
	static const uint8_t mov_push[] = { 0x48, 0x89, 0xf8, 0x55 }; /* mov %rdi,%rax */
	static const uint8_t rip_push[] = { 0x48, 0x8b, 0x05, 1, 2, 3, 4, 0x53 }; /* mov x(%rip),%rax */
	static const uint8_t fs_push[] = { 0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0, 0, 0, 0x41, 0x54 };
	static const uint8_t endbr_lea_push[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x48,
						  0x8d, 0x47, 0x08, 0x55 };
	static const uint8_t movzx_test_push[] = { 0x0f, 0xb6, 0x06, 0x85, 0xc0, 0x55 };

	CHECK_INT(probeplace_skip(mov_push, sizeof(mov_push), sizeof(mov_push)), 3);
	CHECK_INT(probeplace_skip(rip_push, sizeof(rip_push), 0), 7);
	CHECK_INT(probeplace_skip(fs_push, sizeof(fs_push), 0), 9);
	CHECK_INT(probeplace_skip(endbr_lea_push, sizeof(endbr_lea_push), 0), 8);
	CHECK_INT(probeplace_skip(movzx_test_push, sizeof(movzx_test_push), 0), 5);
}

static const uint8_t mov_then_push_past_end[] = { 0x48, 0x89, 0xf8, 0x55 };

TEST(a_branch_a_stack_or_first_argument_write_or_too_many_keep_the_entry)
{
	static const uint8_t sub_rsp[] = { 0x48, 0x83, 0xec, 0x18, 0x55 }; /* sub $24,%rsp */
	static const uint8_t rdi[] = { 0x48, 0x89, 0xc7, 0x55 };           /* mov %rax,%rdi */
	static const uint8_t edi_imm[] = { 0xbf, 1, 0, 0, 0, 0x55 };       /* mov $1,%edi */
	static const uint8_t r15_ok[] = { 0x49, 0x89, 0xff, 0x55 };        /* mov %rdi,%r15 */
	static const uint8_t jcc[] = { 0x85, 0xff, 0x74, 0x05, 0x55 };     /* test; je */
	static const uint8_t five[] = { 0x31, 0xc0, 0x31, 0xc0, 0x31, 0xc0,
					0x31, 0xc0, 0x31, 0xc0, 0x55 };
	static const uint8_t four[] = { 0x31, 0xc0, 0x31, 0xc0, 0x31, 0xc0, 0x31, 0xc0, 0x55 };
	static const uint8_t ret[] = { 0x48, 0x8b, 0x47, 0x08, 0xc3 }; /* a getter */
	static const uint8_t cut[] = { 0x48, 0x8b, 0x05, 1, 2 };       /* cut short */

	CHECK_INT(probeplace_skip(sub_rsp, sizeof(sub_rsp), 0), 0);
	CHECK_INT(probeplace_skip(rdi, sizeof(rdi), 0), 0);
	CHECK_INT(probeplace_skip(edi_imm, sizeof(edi_imm), 0), 0);
	CHECK_INT(probeplace_skip(r15_ok, sizeof(r15_ok), 0), 3);
	CHECK_INT(probeplace_skip(jcc, sizeof(jcc), 0), 0);
	CHECK_INT(probeplace_skip(five, sizeof(five), 0), 0);
	CHECK_INT(probeplace_skip(four, sizeof(four), 0), 8);
	CHECK_INT(probeplace_skip(ret, sizeof(ret), sizeof(ret)), 0);
	CHECK(!probeplace_emulated_at(ret, sizeof(ret)));
	CHECK_INT(probeplace_skip(cut, sizeof(cut), 0), 0);
	/* The push is past the function's size: another function's. */
	CHECK_INT(probeplace_skip(mov_then_push_past_end, sizeof(mov_then_push_past_end), 3), 0);
}

TEST(a_function_too_short_to_hold_the_push_is_not_moved)
{
	static const uint8_t rbp[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x55 };
	static const uint8_t r15[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x41, 0x57 };

	CHECK_INT(probeplace_skip(rbp, sizeof(rbp), 4), 0); /* st_size 4: the push is another function's */
	CHECK_INT(probeplace_skip(r15, sizeof(r15), 5), 0);
	CHECK_INT(probeplace_skip(rbp, 0, 0), 0);
}
#else
TEST(other_architectures_keep_the_first_instruction)
{
	static const uint8_t code[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x55 };

	CHECK_INT(probeplace_skip(code, sizeof(code), 0), 0);
}
#endif

UNIT_MAIN()
