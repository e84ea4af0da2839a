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
 * Chosen: on x86-64, a function that begins with endbr64 followed by a
 * push is probed at the push. It is on the entry path, runs exactly once
 * per call (no compiler branches back to a prologue's push: the stack
 * would grow), and the stack
 * pointer there is still the entry's, so a uretprobe at the same place
 * finds the return address on top (and shares the one trap). Anything else
 * is probed at its first instruction. Pure: the caller reads the bytes.
 */
#ifndef DYNPROF_PROBEPLACE_H
#define DYNPROF_PROBEPLACE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Bytes to skip from the function's first instruction (0 or 4), given its
 * first `n` code bytes (the function's size bounds n; 0 when unknown).
 */
size_t probeplace_skip(const uint8_t *code, size_t n);

/* Code bytes probeplace_skip looks at, at most. */
#define PROBEPLACE_BYTES 6

#endif /* DYNPROF_PROBEPLACE_H */
