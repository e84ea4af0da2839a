/* SPDX-License-Identifier: MIT */
/*
 * Counting a function's calls in a target, in the kernel: a uprobe on the
 * function in the library the target has mapped, a counter per (target,
 * probe) in a BPF map, and a ring-buffer event only when the counter
 * reaches an armed threshold -- never one event per call.
 *
 * A probe is (pid, probe_id): probe_id is the caller's number for one
 * LIB:SYMBOL pair; counts start at 0 when the probe is attached. Several
 * thresholds may be armed on one probe; the kernel holds the lowest, and
 * the next is armed when it fires.
 */
#ifndef DYNPROF_CALLCOUNT_H
#define DYNPROF_CALLCOUNT_H

#include <stddef.h>
#include <stdint.h>

struct callcount;

enum callcount_state {
	CALLCOUNT_ATTACHED = 0,   /* counting */
	CALLCOUNT_NOT_MAPPED = 1, /* LIB not (yet) mapped in the target: callcount_refresh() retries */
};

/* Load the BPF side. NULL with a one-line reason in err when it cannot be used. */
struct callcount *callcount_open(char *err, size_t errlen);
void callcount_close(struct callcount *cc);

/* The ring buffer's fd to poll (POLLIN: call callcount_consume). */
int callcount_fd(const struct callcount *cc);

/*
 * Count calls of `symbol` in `lib` (a path, or a library name matched
 * against the basenames of the target's file mappings: "libfoo.so" matches
 * libfoo.so, libfoo.so.1, libfoo.so.1.2) in process `pid` (host pid).
 * Returns CALLCOUNT_ATTACHED, CALLCOUNT_NOT_MAPPED, or a negative errno
 * with one line in err: -ENOENT the symbol is not in the library (or the
 * library path does not exist), -ESRCH no such process, others from the
 * kernel.
 */
int callcount_watch(struct callcount *cc, int pid, unsigned probe_id, const char *lib,
		    const char *symbol, char *err, size_t errlen);

/* Arm a threshold (an absolute count since the probe was attached). 0 or -errno. */
int callcount_arm(struct callcount *cc, int pid, unsigned probe_id, uint64_t threshold);

/* The probe's count now (0 when it is not attached). */
uint64_t callcount_read(struct callcount *cc, int pid, unsigned probe_id);

/*
 * Retry NOT_MAPPED probes (a library dlopen'd since). `attached` is called
 * for each that is now counting, `failed` (with one line) for each that can
 * never count (the library came, the symbol is not in it).
 */
struct callcount_handlers {
	/* A threshold was reached: count is the counter when it fired, ktime_ns its kernel time. */
	void (*fired)(void *ctx, int pid, unsigned probe_id, uint64_t count, uint64_t ktime_ns);
	void (*attached)(void *ctx, int pid, unsigned probe_id, const char *path);
	void (*failed)(void *ctx, int pid, unsigned probe_id, const char *why);
	void *ctx;
};
void callcount_refresh(struct callcount *cc, const struct callcount_handlers *h);

/* Read the ring buffer: handlers->fired for every threshold reached. */
void callcount_consume(struct callcount *cc, const struct callcount_handlers *h);

/* Pending NOT_MAPPED probes exist: the caller should call callcount_refresh every CALLCOUNT_REFRESH_MS. */
int callcount_pending(const struct callcount *cc);
#define CALLCOUNT_REFRESH_MS 20

/* Detach and forget every probe of `pid` (it left the session). */
void callcount_forget(struct callcount *cc, int pid);

/*
 * Check before anything starts that `symbol` is in the ELF file at `path`
 * (.dynsym or .symtab, a function with an address): 0, or -ENOENT / -errno
 * with one line in err.
 */
int callcount_check_file(const char *path, const char *symbol, char *err, size_t errlen);

#endif /* DYNPROF_CALLCOUNT_H */
