// SPDX-License-Identifier: MIT
/*
 * probe_share LIB...: of each library's exported functions (.dynsym,
 * STT_FUNC, defined, with a size; IFUNCs are not probed by name), how many
 * take a uprobe the kernel emulates (one trap) at their first instruction,
 * past an endbr64 onto a push only (dynprof's rule before), and where
 * kernel/probeplace.h puts it now. The rest are
 * single-stepped (a second trap: ~10 us per call on this VM against
 * ~0.6 us, docs/BENCHMARKS.md). PROBE_SHARE_PREFIX=TEXT counts only the
 * functions whose name begins with TEXT (pthread_: issue 26 asks for
 * every libc pthread function). Prints one line per library:
 *   lib=PATH functions=N at_entry=E endbr_push=B placed=P share_at_entry=X%
 *   share_endbr_push=Y% share_placed=Z%
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kernel/probeplace.h"

struct tally {
	long functions, at_entry, endbr_push, placed;
};

/* The rule before the walk over plain instructions: past an endbr64 onto a push only. */
static size_t endbr_push_skip(const uint8_t *c, size_t n)
{
	static const uint8_t endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };

	if (n < 5 || memcmp(c, endbr64, 4))
		return 0;
	if ((c[4] >= 0x50 && c[4] <= 0x57) || (n >= 6 && c[4] == 0x41 && c[5] >= 0x50 && c[5] <= 0x57))
		return 4;
	return 0;
}

/* The file offset of address `addr`: the loadable segment holding it. */
static long file_offset(Elf *e, uint64_t addr)
{
	size_t n;
	GElf_Phdr ph;

	if (elf_getphdrnum(e, &n))
		return -1;
	for (size_t i = 0; i < n; i++)
		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && addr >= ph.p_vaddr &&
		    addr < ph.p_vaddr + ph.p_filesz)
			return (long)(addr - ph.p_vaddr + ph.p_offset);
	return -1;
}

static void count(int fd, Elf *e, const GElf_Sym *sym, struct tally *t)
{
	uint8_t code[PROBEPLACE_BYTES];
	long off = file_offset(e, sym->st_value);
	size_t want = sym->st_size < sizeof(code) ? (size_t)sym->st_size : sizeof(code);
	ssize_t got;
	size_t skip;

	if (off < 0 || (got = pread(fd, code, want, off)) <= 0)
		return;
	t->functions++;
	skip = probeplace_skip(code, (size_t)got, sym->st_size);
	t->at_entry += probeplace_emulated_at(code, (size_t)got);
	t->endbr_push += probeplace_emulated_at(code + endbr_push_skip(code, (size_t)got),
						(size_t)got - endbr_push_skip(code, (size_t)got));
	t->placed += probeplace_emulated_at(code + skip, (size_t)got - skip);
}

static double pct(long part, long whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* PROBE_SHARE_PREFIX, when set: only the functions named with it count. */
static bool wanted(Elf *e, size_t strtab, const GElf_Sym *sym)
{
	const char *prefix = getenv("PROBE_SHARE_PREFIX");
	const char *name;

	if (!prefix || !*prefix)
		return true;
	name = elf_strptr(e, strtab, sym->st_name);
	return name && !strncmp(name, prefix, strlen(prefix));
}

static int one(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct tally t = { 0 };
	Elf_Scn *scn = NULL;
	Elf *e;

	if (fd < 0 || !(e = elf_begin(fd, ELF_C_READ, NULL))) {
		fprintf(stderr, "probe_share: %s: cannot read\n", path);
		return 1;
	}
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;

			if (gelf_getsym(d, (int)i, &sym) && GELF_ST_TYPE(sym.st_info) == STT_FUNC &&
			    sym.st_shndx != SHN_UNDEF && sym.st_value && sym.st_size &&
			    wanted(e, sh.sh_link, &sym))
				count(fd, e, &sym, &t);
		}
	}
	elf_end(e);
	close(fd);
	printf("lib=%s functions=%ld at_entry=%ld endbr_push=%ld placed=%ld share_at_entry=%.1f%% share_endbr_push=%.1f%% share_placed=%.1f%%\n",
	       path, t.functions, t.at_entry, t.endbr_push, t.placed, pct(t.at_entry, t.functions),
	       pct(t.endbr_push, t.functions), pct(t.placed, t.functions));
	return 0;
}

int main(int argc, char **argv)
{
	int rc = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: probe_share LIB...\n");
		return 2;
	}
	elf_version(EV_CURRENT);
	for (int i = 1; i < argc; i++)
		rc |= one(argv[i]);
	return rc;
}
