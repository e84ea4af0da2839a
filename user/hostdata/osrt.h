/* SPDX-License-Identifier: MIT */
/*
 * --host-sys=osrt's kernel side (bpf/osrt.bpf.c): loaded on the first
 * window that asks for it and kept for the run; a process is watched from
 * its window's open to its close. Records are read in batches by
 * osrt_consume (the kernel never wakes a reader).
 *
 * Not thread-safe: the caller serialises (hostdata.c holds its lock).
 * Errors: convention 2 of docs/ERRORS.md (negative errno, the reason in why).
 */
#ifndef DYNPROF_OSRT_USER_H
#define DYNPROF_OSRT_USER_H

#include <stddef.h>
#include <stdint.h>

#include "dynprof/osrt.h"
#include "shared/compiler.h"

typedef void (*osrt_call_fn)(void *ctx, const struct dp_osrt_call *c);

/* Load and attach once; `fn` gets every record osrt_consume reads. 0 when loaded already. */
int osrt_load(osrt_call_fn fn, void *ctx, char *why, size_t why_len) DP_MUST_CHECK;
int osrt_loaded(void);

/* Watch the host process `tgid` from now on (its threads, those to come too). */
int osrt_watch(uint32_t tgid, char *why, size_t why_len) DP_MUST_CHECK;

/* Stop watching; *lost: its records the kernel could not send while watched. */
int osrt_unwatch(uint32_t tgid, uint64_t *lost) DP_MUST_CHECK;

/* The records of watched `tgid` the kernel could not send so far (it stays watched). */
int osrt_lost(uint32_t tgid, uint64_t *lost) DP_MUST_CHECK;

struct bpf_link;

/*
 * Record process `pid`'s calls of the function at `offset` in the ELF file
 * `path` (reachable from here; the same file the process maps), as
 * pthread function `func` (its index in DP_OSRT_PTH_FUNCS): a uretprobe and
 * a uprobe there, links[0] the entry's, links[1] the return's. Records come
 * while `pid` is watched. 0, or a negative errno with the line in why.
 */
int osrt_pth_attach(int pid, const char *path, uint64_t offset, unsigned func,
		    struct bpf_link *links[2], char *why, size_t why_len) DP_MUST_CHECK;

/* Close the links in the background (a uprobe link takes ~100 ms to close); NULLs them. */
void osrt_pth_detach(int pid, struct bpf_link *links[2]);

/* Hand every record in the ring to the callback; the count, or a negative errno. */
int osrt_consume(void);

#endif /* DYNPROF_OSRT_USER_H */
