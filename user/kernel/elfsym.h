/* SPDX-License-Identifier: MIT */
/*
 * A function symbol of an ELF executable or shared library, and where its
 * code lies in the file: a uprobe is placed by (file, offset in the file),
 * not by address or name.
 *
 * Errors: convention 2 of docs/ERRORS.md (negative errno, one line in err).
 */
#ifndef DYNPROF_ELFSYM_H
#define DYNPROF_ELFSYM_H

#include <stddef.h>
#include <stdint.h>

#include "shared/compiler.h"

#define ELFSYM_CODE_BYTES 16 /* bytes of the function's start kept (probe placement) */

struct elfsym {
	uint64_t addr;   /* st_value: the link-time address */
	uint64_t size;   /* st_size (0 when the file does not say) */
	uint64_t offset; /* file offset of the first instruction: the uprobe's offset */
	int dynamic;     /* found in .dynsym (exported); 0: .symtab */
	uint8_t code[ELFSYM_CODE_BYTES]; /* the function's first bytes, read from the same open */
	size_t code_len; /* how many of them were read (at most size, 0 when unreadable) */
};

/*
 * Find the function `name` in the ELF file at `path`: .dynsym first, then
 * .symtab; defined functions only (not undefined references, not address
 * 0). Among versioned copies (malloc@GLIBC_2.2.5, memcpy@@GLIBC_2.14) the
 * default one; exported before local. 0, or with one line in err:
 *   -ENOENT   the file does not exist, or has no such function
 *   -ENOEXEC  not a regular file (a FIFO or device is never opened for
 *             reading: the path may be in a target's filesystem), not an
 *             ELF executable or shared library, or the address lies in no
 *             loadable segment
 *   -ENOTSUP  the name is an IFUNC: its resolver runs once at load time and
 *             the code actually called is another function, chosen then
 *   -errno    the file could not be read
 */
int elfsym_find(const char *path, const char *name, struct elfsym *out, char *err,
		size_t errlen) DP_MUST_CHECK;

#endif /* DYNPROF_ELFSYM_H */
