/* SPDX-License-Identifier: MIT */
/* Inside the host side of the per-target helper: shared by fshelper.c and fshelper_copy.c. */
#ifndef DYNPROF_FSHELPER_IMPL_H
#define DYNPROF_FSHELPER_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "ns/fshelper_wire.h"
#include "shared/compiler.h"

struct fshelper {
	int chan; /* -1 once the helper is gone */
	int pid;
	char *buf;           /* FSH_PAYLOAD_MAX + 1: the last message's payload, NUL-terminated */
	int64_t deadline_ms; /* 0, or when the operation under way must be over (fshelper_set_deadline) */
};

int fsh_send(struct fshelper *h, uint32_t op, uint64_t a, const void *p, size_t n) DP_MUST_CHECK;
int fsh_recv(struct fshelper *h, struct fsh_msg *m, size_t *plen) DP_MUST_CHECK;
int fsh_done(struct fshelper *h) DP_MUST_CHECK;
void fsh_kill(struct fshelper *h);

#endif /* DYNPROF_FSHELPER_IMPL_H */
