/* SPDX-License-Identifier: MIT */
/*
 * What every BPF loader of the tool shares (discover_bpf.c, callcount.c,
 * hostdata/osrt.c, hostdata/iowait.c):
 * can BPF be used here at all, and libbpf's messages kept off stderr so a
 * failed step can quote the first one in its single line.
 *
 * Errors: convention 2 of docs/ERRORS.md (negative errno, the reason in why).
 */
#ifndef DYNPROF_BPFUTIL_H
#define DYNPROF_BPFUTIL_H

#include <stddef.h>
#include <stdint.h>

#include "shared/compiler.h"

/*
 * 0 when this process may load tracing programs that see the same pids it
 * does: privileges, kernel BTF, the initial pid namespace. Else -EPERM or
 * -ENOENT, with the reason in why ("not root", "no kernel BTF at ...").
 */
int bpfutil_usable(char *why, size_t why_len) DP_MUST_CHECK;

/*
 * Route libbpf's messages to the capture for as long as one holder holds
 * it; the last release puts back the print function found by the first
 * hold. Not thread-safe: loaders run on the main thread.
 */
void bpfutil_quiet_hold(void);
void bpfutil_quiet_release(void);

/* Forget the captured messages: call before the steps a failure would quote. */
void bpfutil_quiet_reset(void);

/*
 * The one line for a failed step: "<step>: <strerror(-err)>; libbpf: <the
 * first warning since the reset>" (the last one when the first was
 * skipped, no libbpf part when it said nothing).
 */
void bpfutil_failure(char *why, size_t why_len, const char *step, int err);

/*
 * A loader's frame: bpfutil_usable, then libbpf's messages captured from a
 * fresh start (0), or the reason in why. bpfutil_load_end, after a begin
 * that returned 0 (or a capture held and reset for a later step, as an
 * attach): the failed step's line in why when err (a positive err is
 * taken as -EINVAL), and the capture released.
 */
int bpfutil_load_begin(char *why, size_t why_len) DP_MUST_CHECK;
void bpfutil_load_end(char *why, size_t why_len, const char *step, int err);

struct bpf_map;

/*
 * The per-process maps of the host-data loaders (osrt, iowait): key a host
 * tgid, value a struct of counters. Watch puts the tgid in with `init` (of
 * `size` bytes, the map's value size) as its value, the reason in why on
 * failure; value reads it into `value` of `size` bytes.
 */
int bpfutil_tgid_watch(struct bpf_map *m, uint32_t tgid, const void *init, size_t size, char *why,
		       size_t why_len) DP_MUST_CHECK;
int bpfutil_tgid_value(const struct bpf_map *m, uint32_t tgid, void *value, size_t size) DP_MUST_CHECK;

#endif /* DYNPROF_BPFUTIL_H */
