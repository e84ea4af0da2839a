// SPDX-License-Identifier: MIT
/*
 * sock_diag answers (sock/sockdiag.c): any bytes as a datagram from the
 * kernel. The first byte picks an exact query's answer (odd) or a dump's;
 * the answers are to request 5.
 */
#include <string.h>

#include "fuzz.h"
#include "sock/sockdiag.h"

static void seen(void *ctx, const struct sockdiag_rec *r)
{
	size_t *n = ctx;
	char text[SOCKDIAG_NAME_MAX + 2];

	/* A record says only what came: a live peer needs the peer attribute. */
	FUZZ_CHECK(!sockdiag_live_peer(r) || (r->has_peer && r->peer != 0));
	/* A name never longer than sun_path; its text ends inside the buffer or is refused. */
	FUZZ_CHECK(!r->has_name || r->name_len <= SOCKDIAG_NAME_MAX);
	if (sockdiag_name_text(r, text, sizeof(text)) == 0)
		FUZZ_CHECK(strlen(text) <= SOCKDIAG_NAME_MAX);
	(*n)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t n = 0;
	int rc;

	if (size < 1)
		return 0;
	rc = sockdiag_parse(data + 1, size - 1, 5, data[0] & 1, seen, &n);
	FUZZ_CHECK(rc <= 1);
	/* Each record takes a netlink header and a unix_diag_msg at least. */
	FUZZ_CHECK(n <= (size - 1) / 32);
	return 0;
}
