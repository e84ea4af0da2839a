// SPDX-License-Identifier: MIT
/* probeplace.h: which instruction of a function's entry to probe. */
#include <stdbool.h>
#include <string.h>

#include "kernel/probeplace.h"

#define MAX_SKIPPED 4 /* instructions walked over before the push or the tail jump */
#define NO_REG (-1)

enum kind { K_UNKNOWN, K_PLAIN, K_PUSH, K_JMP };

/* One decoded instruction: its length, what it is, the register it writes. */
struct insn {
	size_t len;
	enum kind kind;
	int writes; /* 0-15 (rax..r15), NO_REG: none, or memory only */
};

struct prefixes {
	size_t len;
	bool legacy, opsize; /* any legacy prefix; 0x66 among them */
	int rex;             /* 0: none */
};

static const uint8_t endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };

static struct prefixes read_prefixes(const uint8_t *c, size_t n)
{
	struct prefixes p = { 0 };

	while (p.len < n && (c[p.len] == 0x66 || c[p.len] == 0x64 || c[p.len] == 0x65)) {
		p.opsize |= c[p.len] == 0x66;
		p.legacy = true;
		p.len++;
	}
	if (p.len < n && c[p.len] >= 0x40 && c[p.len] <= 0x4f)
		p.rex = c[p.len++];
	return p;
}

/* Bytes of a ModRM operand (ModRM, SIB, displacement), 0 when cut short. */
static size_t modrm_len(const uint8_t *c, size_t n)
{
	size_t len = 1;
	int mod, rm;

	if (n < 1)
		return 0;
	mod = c[0] >> 6;
	rm = c[0] & 7;
	if (mod != 3 && rm == 4) {
		if (n < 2)
			return 0;
		len++;
		if (mod == 0 && (c[1] & 7) == 5)
			len += 4;
	}
	if (mod == 0 && rm == 5)
		len += 4; /* rip-relative */
	len += mod == 1 ? 1 : mod == 2 ? 4 : 0;
	return len <= n ? len : 0;
}

/* Where a ModRM instruction writes: the reg field, the r/m register, or nothing. */
enum dest { D_NONE, D_REG, D_RM };

/* The ModRM forms an entry holds: mov, lea, movzx/sx, add/or/and/sub/xor/cmp/test, shifts. */
static bool modrm_form(const uint8_t *op, size_t n, uint8_t modrm, bool twobyte, enum dest *d,
		       size_t *imm, bool opsize)
{
	int ext = (modrm >> 3) & 7;
	uint8_t o = op[0];

	(void)n;
	*imm = 0;
	if (twobyte) {
		*d = (o == 0xb6 || o == 0xb7 || o == 0xbe || o == 0xbf) ? D_REG : D_NONE;
		/* movups/aps/dqa/dqu, pxor, xorps, movq: xmm or memory destinations */
		return *d == D_REG || o == 0x10 || o == 0x11 || o == 0x28 || o == 0x29 ||
		       o == 0x6f || o == 0x7f || o == 0xef || o == 0x57 || o == 0xd6;
	}
	switch (o) {
	case 0x00:
	case 0x01:
	case 0x08:
	case 0x09:
	case 0x20:
	case 0x21:
	case 0x28:
	case 0x29:
	case 0x30:
	case 0x31:
	case 0x88:
	case 0x89:
		*d = D_RM;
		return true;
	case 0x02:
	case 0x03:
	case 0x0a:
	case 0x0b:
	case 0x22:
	case 0x23:
	case 0x2a:
	case 0x2b:
	case 0x32:
	case 0x33:
	case 0x8a:
	case 0x8b:
	case 0x8d:
	case 0x63:
		*d = D_REG;
		return o != 0x8d || (modrm >> 6) != 3;
	case 0x38:
	case 0x39:
	case 0x3a:
	case 0x3b:
	case 0x84:
	case 0x85:
		*d = D_NONE;
		return true;
	case 0x80:
	case 0x83:
	case 0x81:
		*imm = o == 0x81 ? (opsize ? 2 : 4) : 1;
		*d = ext == 7 ? D_NONE : D_RM;
		return true;
	case 0xc6:
	case 0xc7:
		*imm = o == 0xc6 ? 1 : opsize ? 2 : 4;
		*d = D_RM;
		return ext == 0;
	case 0xf6:
	case 0xf7:
		*imm = o == 0xf6 ? 1 : opsize ? 2 : 4;
		*d = D_NONE;
		return ext == 0;
	case 0xc1:
	case 0xd1:
		*imm = o == 0xc1 ? 1 : 0;
		*d = D_RM;
		return ext == 4 || ext == 5 || ext == 7;
	default:
		return false;
	}
}

static struct insn decode_modrm(const uint8_t *c, size_t n, struct prefixes p)
{
	struct insn in = { 0, K_UNKNOWN, NO_REG };
	bool twobyte = c[p.len] == 0x0f;
	size_t at = p.len + twobyte, ml, imm;
	enum dest d;

	if (at + 1 >= n || !modrm_form(c + at, n - at, c[at + 1], twobyte, &d, &imm, p.opsize))
		return in;
	ml = modrm_len(c + at + 1, n - at - 1);
	if (!ml || at + 1 + ml + imm > n)
		return in;
	in.len = at + 1 + ml + imm;
	in.kind = K_PLAIN;
	if (d == D_REG)
		in.writes = ((c[at + 1] >> 3) & 7) | ((p.rex & 4) << 1);
	else if (d == D_RM && (c[at + 1] >> 6) == 3)
		in.writes = (c[at + 1] & 7) | ((p.rex & 1) << 3);
	return in;
}

static struct insn decode(const uint8_t *c, size_t n)
{
	struct insn in = { 0, K_UNKNOWN, NO_REG };
	struct prefixes p = read_prefixes(c, n);
	uint8_t o;

	if (p.len >= n)
		return in;
	o = c[p.len];
	/* The kernel emulates push %reg with no prefix or REX.B alone, and jmp with none. */
	if (o >= 0x50 && o <= 0x57 && !p.legacy && (p.rex == 0 || p.rex == 0x41))
		return (struct insn){ p.len + 1, K_PUSH, NO_REG };
	if ((o == 0xe9 || o == 0xeb) && !p.len)
		return (struct insn){ o == 0xe9 ? 5 : 2, K_JMP, NO_REG };
	if (o >= 0xb8 && o <= 0xbf) { /* mov $imm, %reg */
		size_t len = p.len + 1 + ((p.rex & 8) ? 8 : p.opsize ? 2 : 4);

		if (len <= n)
			in = (struct insn){ len, K_PLAIN, (o & 7) | ((p.rex & 1) << 3) };
		return in;
	}
	return decode_modrm(c, n, p);
}

size_t probeplace_skip(const uint8_t *code, size_t n, uint64_t size)
{
#if defined(__x86_64__)
	size_t at = 0;

	if (size && size < n)
		n = (size_t)size;
	if (n >= sizeof(endbr64) && !memcmp(code, endbr64, sizeof(endbr64)))
		at = sizeof(endbr64);
	for (int i = 0; i <= MAX_SKIPPED && at < n; i++) {
		struct insn in = decode(code + at, n - at);

		if (in.kind == K_PUSH)
			return at;
		if (in.kind == K_JMP && at + in.len == size)
			return at; /* a tail call: the function's last instruction */
		if (in.kind != K_PLAIN || in.writes == 4 || in.writes == 7)
			break; /* a branch, the stack pointer, the first argument, or unknown */
		at += in.len;
	}
#else
	(void)code;
	(void)n;
	(void)size;
#endif
	return 0;
}

bool probeplace_emulated_at(const uint8_t *code, size_t n)
{
#if defined(__x86_64__)
	struct insn in = decode(code, n);

	if (in.kind == K_PUSH || in.kind == K_JMP)
		return true;
	return n >= 1 && (code[0] == 0xe8 || code[0] == 0x90 || (code[0] >= 0x70 && code[0] <= 0x7f) ||
			  (n >= 2 && code[0] == 0x0f && code[1] >= 0x80 && code[1] <= 0x8f));
#else
	(void)code;
	(void)n;
	return false;
#endif
}
