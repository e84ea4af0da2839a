// SPDX-License-Identifier: MIT
/*
 * sock_diag answers (proc/sockdiag.c). The kernel writes them, but they are
 * parsed as hostile bytes all the same (the seeds are real answers of this
 * machine's kernel: a dump with VFS, PEER, NAME and RQLEN attributes, and
 * NLMSG_DONE). The first byte picks the request kind: a dump or one socket.
 */
#include "fuzz.h"
#include "proc/sockdiag.h"

static void check(void *ctx, const struct sockdiag_rec *r)
{
	int *n = ctx;

	(*n)++;
	/* What the callers decide from a record must not read what did not come. */
	FUZZ_CHECK(r->has_peer || !sockdiag_live_peer(r));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int n = 0, rc;

	if (size < 1)
		return 0;
	rc = sockdiag_parse(data + 1, size - 1, 5, data[0] & 1, check, &n);
	FUZZ_CHECK(rc <= 1);
	/* Every record is in the bytes: at least a header and a unix_diag_msg each. */
	FUZZ_CHECK((size_t)n * 32 <= size);
	return 0;
}
