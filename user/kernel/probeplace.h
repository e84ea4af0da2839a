/* SPDX-License-Identifier: MIT */
/*
 * Where to put a function's uprobe. A uprobe hit traps; the kernel then
 * either emulates the instruction under the breakpoint (on x86-64: push,
 * call, jmp, jcc: one trap) or copies it out of line and single-steps
 * it there (a second trap: ~9 us against ~0.6 us measured here, see
 * docs/BENCHMARKS.md). Functions built with -fcf-protection (Debian's and
 * Ubuntu's default) begin with endbr64, which is single-stepped, and most
 * of them then push a register.
 *
 * Chosen, on x86-64: the function's first push, or its last instruction
 * when that is a jmp (a tail call: `pthread_join` is three register moves
 * and a jmp), past an endbr64 and at most 4 instructions before it that
 * are neither branches nor writes of %rsp or %rdi (mov, lea, movzx, add,
 * xor, test, cmp, shifts; the few forms an entry holds, decoded here).
 * Either runs exactly once per call: no compiler branches back before a
 * push (the stack would grow), and nothing follows a tail jump to branch
 * back from. The stack pointer there is still the entry's, so a uretprobe
 * at the same place finds the return address on top (and shares the one
 * trap); the first argument (%rdi) is still the caller's, which the
 * pthread probes read. Anything else is probed at its first instruction.
 * Pure: the caller reads the bytes.
 */
#ifndef DYNPROF_PROBEPLACE_H
#define DYNPROF_PROBEPLACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Bytes to skip from the function's first instruction, given its first `n`
 * code bytes and its size (st_size; 0 when unknown: no tail jump is taken).
 */
size_t probeplace_skip(const uint8_t *code, size_t n, uint64_t size);

/*
 * Whether the kernel emulates a breakpoint on the instruction at `code`
 * (push, jmp, call, jcc, nop; one trap) or single-steps it (a second trap).
 */
bool probeplace_emulated_at(const uint8_t *code, size_t n);

/* Code bytes probeplace_skip looks at, at most. */
#define PROBEPLACE_BYTES 16

#endif /* DYNPROF_PROBEPLACE_H */
