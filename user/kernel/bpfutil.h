/* SPDX-License-Identifier: MIT */
/*
 * What every BPF loader of the tool shares (discover_bpf.c, callcount.c):
 * can BPF be used here at all, and libbpf's messages kept off stderr so a
 * failed step can quote the first one in its single line.
 *
 * Errors: convention 2 of docs/ERRORS.md (negative errno, the reason in why).
 */
#ifndef DYNPROF_BPFUTIL_H
#define DYNPROF_BPFUTIL_H

#include <stddef.h>

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

#endif /* DYNPROF_BPFUTIL_H */
