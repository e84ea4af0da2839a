// SPDX-License-Identifier: MIT
/*
 * A server's replies (user/shared/proto.c): whatever bytes a target sends
 * back, as v2 messages and v1 responses, decoded for every command.
 */
#include "fuzz.h"
#include "dynprof/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proto_v1_response v1;
	struct proto_v2_msg v2;
	struct proto_reply out;

	memset(&v1, 0, sizeof(v1));
	memset(&v2, 0, sizeof(v2));
	memcpy(&v1, data, size < sizeof(v1) ? size : sizeof(v1));
	memcpy(&v2, data, size < sizeof(v2) ? size : sizeof(v2));
	for (int cmd = PROTO_CMD_START; cmd <= PROTO_CMD_QUIT; cmd++) {
		proto_v1_decode_reply(&v1, cmd, &out);
		FUZZ_CHECK(fuzz_terminated(out.detail, sizeof(out.detail)));
		proto_v2_decode_reply(&v2, cmd, &out);
		FUZZ_CHECK(out.status >= PROTO_OK && out.status <= PROTO_BAD_REPLY);
	}
	proto_v1_decode_test_ack(&v1, &out);
	FUZZ_CHECK(fuzz_terminated(out.detail, sizeof(out.detail)));
	proto_v2_decode_params_ack(&v2, &out);
	return 0;
}
