// SPDX-License-Identifier: MIT
/*
 * elfsym.h with libelf: the symbol tables give a function's link-time
 * address, the program headers where that address lies in the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kernel/elfsym.h"

#ifndef VERSYM_HIDDEN
#define VERSYM_HIDDEN 0x8000 /* a non-default version: name@VER, not name@@VER */
#endif

/* The best candidate so far; a higher rank wins, the first of a rank stays. */
struct pick {
	int rank; /* 0: none */
	bool ifunc;
	bool dynamic;
	GElf_Addr addr;
	GElf_Xword size;
};

/*
 * How a symbol table's name fits `name`: 0 not at all, 1 a non-default
 * version (name@VER), 2 the name itself or its default version (name@@VER).
 * .dynsym keeps versions apart (versym); .symtab writes them into the name.
 */
static int name_fit(const char *sym, const char *name, size_t name_len)
{
	if (strncmp(sym, name, name_len) != 0)
		return 0;
	sym += name_len;
	if (*sym == '\0' || strncmp(sym, "@@", 2) == 0)
		return 2;
	return *sym == '@' ? 1 : 0;
}

/*
 * A symbol's rank as `name`, 0 when it does not qualify: the default
 * version first (what callers are linked to: memcpy@@GLIBC_2.14, not the
 * old memcpy@GLIBC_2.2.5), then exported before local (a local name may
 * repeat), then a function before an IFUNC. An IFUNC that ranks first is
 * refused rather than passed over for a lesser copy.
 */
static int symbol_rank(const GElf_Sym *sym, int fit, bool hidden_version)
{
	int type = GELF_ST_TYPE(sym->st_info);

	if (!fit || sym->st_shndx == SHN_UNDEF || sym->st_value == 0)
		return 0;
	if (type != STT_FUNC && type != STT_GNU_IFUNC)
		return 0;
	return 1 + (fit == 2 && !hidden_version ? 4 : 0) +
	       (GELF_ST_BIND(sym->st_info) != STB_LOCAL ? 2 : 0) + (type == STT_FUNC ? 1 : 0);
}

/* The section of type `type` (the first), or NULL. */
static Elf_Scn *section_of_type(Elf *elf, GElf_Word type, GElf_Shdr *shdr)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, shdr) && shdr->sh_type == type)
			return scn;
	return NULL;
}

/* Is dynsym entry i a non-default version? (versym may be absent) */
static bool hidden_version(Elf_Data *versym, size_t i)
{
	GElf_Versym v;

	if (!versym || !gelf_getversym(versym, (int)i, &v))
		return false;
	return (v & VERSYM_HIDDEN) != 0;
}

/* Scan one symbol table (SHT_DYNSYM or SHT_SYMTAB) into `best`. */
static void scan_table(Elf *elf, GElf_Word type, const char *name, struct pick *best)
{
	Elf_Data *data, *versym = NULL;
	GElf_Shdr shdr, vshdr;
	Elf_Scn *scn, *vscn;
	size_t name_len = strlen(name), n;

	scn = section_of_type(elf, type, &shdr);
	if (!scn || shdr.sh_entsize == 0 || !(data = elf_getdata(scn, NULL)))
		return;
	if (type == SHT_DYNSYM && (vscn = section_of_type(elf, SHT_GNU_versym, &vshdr)))
		versym = elf_getdata(vscn, NULL);
	n = shdr.sh_size / shdr.sh_entsize;
	for (size_t i = 1; i < n; i++) {
		GElf_Sym sym;
		const char *sname;
		int rank;

		if (!gelf_getsym(data, (int)i, &sym))
			break;
		sname = elf_strptr(elf, shdr.sh_link, sym.st_name);
		if (!sname)
			continue;
		rank = symbol_rank(&sym, name_fit(sname, name, name_len), hidden_version(versym, i));
		if (rank <= best->rank)
			continue;
		*best = (struct pick){ .rank = rank,
				       .ifunc = GELF_ST_TYPE(sym.st_info) == STT_GNU_IFUNC,
				       .dynamic = type == SHT_DYNSYM,
				       .addr = sym.st_value,
				       .size = sym.st_size };
	}
}

/*
 * The file offset of `addr`, from the loadable segment holding it; -1 if
 * none, or if that segment claims bytes past the end of the file (a
 * uprobe there would name no instruction; found by fuzz_elfsym).
 */
static int64_t file_offset(Elf *elf, GElf_Addr addr)
{
	size_t n, file_size = 0;

	if (elf_getphdrnum(elf, &n) != 0 || !elf_rawfile(elf, &file_size))
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		/* Differences, not sums: a segment's fields are the file's, and may overflow. */
		if (addr < ph.p_vaddr || addr - ph.p_vaddr >= ph.p_filesz)
			continue;
		if (ph.p_offset >= file_size || addr - ph.p_vaddr >= file_size - ph.p_offset)
			return -1;
		return (int64_t)(addr - ph.p_vaddr + ph.p_offset);
	}
	return -1;
}

/* An ELF executable or shared library? 0, or -ENOEXEC with the line. */
static int check_kind(Elf *elf, const char *path, char *err, size_t errlen)
{
	GElf_Ehdr eh;

	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		snprintf(err, errlen, "%s: not an ELF file", path);
		return -ENOEXEC;
	}
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) {
		snprintf(err, errlen, "%s: not an ELF executable or shared library", path);
		return -ENOEXEC;
	}
	return 0;
}

/* Look `name` up in an opened ELF file. */
static int find_in(Elf *elf, const char *path, const char *name, struct elfsym *out, char *err,
		   size_t errlen)
{
	struct pick best = { 0 };
	int64_t off;

	/* .symtab only when .dynsym has nothing: it may hold the same names, older. */
	scan_table(elf, SHT_DYNSYM, name, &best);
	if (best.rank == 0)
		scan_table(elf, SHT_SYMTAB, name, &best);
	if (best.rank == 0) {
		snprintf(err, errlen, "no function %s in %s", name, path);
		return -ENOENT;
	}
	if (best.ifunc) {
		snprintf(err, errlen,
			 "%s in %s is an IFUNC (the function really called is chosen at load "
			 "time): not supported",
			 name, path);
		return -ENOTSUP;
	}
	off = file_offset(elf, best.addr);
	if (off < 0) {
		snprintf(err, errlen, "%s in %s: address 0x%llx is in no loadable segment", name,
			 path, (unsigned long long)best.addr);
		return -ENOEXEC;
	}
	*out = (struct elfsym){
		.addr = best.addr, .size = best.size, .offset = (uint64_t)off, .dynamic = best.dynamic
	};
	return 0;
}

/* The function's first bytes, for where its probe goes (none when unreadable). */
static void read_code(int fd, struct elfsym *out)
{
	size_t want = out->size && out->size < sizeof(out->code) ? (size_t)out->size : sizeof(out->code);
	ssize_t got = pread(fd, out->code, want, (off_t)out->offset);

	out->code_len = got > 0 ? (size_t)got : 0;
}

int elfsym_find(const char *path, const char *name, struct elfsym *out, char *err, size_t errlen)
{
	struct stat st;
	Elf *elf;
	int fd, rc;

	if (!path || !name || !*name || !out) {
		snprintf(err, errlen, "no file or no symbol name");
		return -EINVAL;
	}
	if (elf_version(EV_CURRENT) == EV_NONE) {
		snprintf(err, errlen, "libelf: %s", elf_errmsg(-1));
		return -EINVAL;
	}
	/* A target's file: a FIFO must not block the open, a device not be read. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
		return rc;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		close(fd);
		return -ENOEXEC;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	rc = check_kind(elf, path, err, errlen);
	if (!rc)
		rc = find_in(elf, path, name, out, err, errlen);
	if (!rc)
		read_code(fd, out);
	elf_end(elf);
	close(fd);
	return rc;
}
