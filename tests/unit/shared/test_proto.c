// SPDX-License-Identifier: MIT
/* Wire encoding and decoding of both generations. */
#include <errno.h>

#include "dynprof/proto.h"
#include "unit.h"

TEST(v2_params_carry_length_and_zero_padding)
{
	struct proto_v2_params p;

	CHECK_INT(proto_v2_encode_params(&p, "{\"result_dir\":\"/x\"}"), 4100);
	CHECK_INT(p.data_len, 19);
	CHECK(p.data[19] == 0 && p.data[4095] == 0);
}

TEST(v2_params_refuse_empty_and_oversized_json)
{
	static char big[5000];
	struct proto_v2_params p;

	memset(big, 'a', sizeof(big) - 1);
	CHECK_INT(proto_v2_encode_params(&p, ""), -EMSGSIZE);
	CHECK_INT(proto_v2_encode_params(&p, big), -EMSGSIZE);
	big[4096] = '\0'; /* 4096 bytes: one too many */
	CHECK_INT(proto_v2_encode_params(&p, big), -EMSGSIZE);
	big[4095] = '\0'; /* 4095: the most that fits */
	CHECK_INT(proto_v2_encode_params(&p, big), 4100);
	CHECK_INT(p.data_len, 4095);
}

TEST(v2_requests_use_odd_types)
{
	struct proto_v2_msg m;

	proto_v2_encode_request(&m, PROTO_CMD_START);
	CHECK_INT(m.msg_type, 1);
	proto_v2_encode_request(&m, PROTO_CMD_STOP);
	CHECK_INT(m.msg_type, 3);
	proto_v2_encode_request(&m, PROTO_CMD_QUIT);
	CHECK_INT(m.msg_type, 5);
	CHECK_INT(m.status_code, 0);
}

static enum proto_status v2_decode(int32_t type, int32_t code, enum proto_command cmd)
{
	struct proto_v2_msg m = { type, code };
	struct proto_reply r;

	proto_v2_decode_reply(&m, cmd, &r);
	return r.status;
}

TEST(v2_decodes_every_status_code)
{
	CHECK_INT(v2_decode(2, 0, PROTO_CMD_START), PROTO_OK);
	CHECK_INT(v2_decode(2, 1, PROTO_CMD_START), PROTO_FAIL);
	CHECK_INT(v2_decode(2, 2, PROTO_CMD_START), PROTO_ALREADY_STARTED);
	CHECK_INT(v2_decode(2, 3, PROTO_CMD_START), PROTO_NOT_SET_DEVICE);
	CHECK_INT(v2_decode(4, 4, PROTO_CMD_STOP), PROTO_NOT_STARTED);
	CHECK_INT(v2_decode(6, 0, PROTO_CMD_QUIT), PROTO_OK);
}

TEST(v2_disconnect_is_recognised_whatever_was_asked)
{
	CHECK_INT(v2_decode(7, 0, PROTO_CMD_START), PROTO_DISCONNECTED);
	CHECK_INT(v2_decode(7, 0, PROTO_CMD_STOP), PROTO_DISCONNECTED);
}

TEST(v2_mismatched_replies_are_bad)
{
	CHECK_INT(v2_decode(4, 0, PROTO_CMD_START), PROTO_BAD_REPLY);
	CHECK_INT(v2_decode(2, 4, PROTO_CMD_START), PROTO_BAD_REPLY);
	CHECK_INT(v2_decode(4, 2, PROTO_CMD_STOP), PROTO_BAD_REPLY);
	CHECK_INT(v2_decode(99, 77, PROTO_CMD_START), PROTO_BAD_REPLY);
	CHECK_INT(v2_decode(6, 3, PROTO_CMD_QUIT), PROTO_BAD_REPLY);
}

TEST(v1_request_data_is_nul_padded_and_counted)
{
	struct proto_v1_request q;

	CHECK_INT(proto_v1_encode_request(&q, V1_START_REQ, "{\"a\":\"b\"}"), 4104);
	CHECK_INT(q.msg_data_len, 9);
	CHECK(q.msg_data[9] == 0 && q.msg_data[4095] == 0);
	CHECK_INT(proto_v1_encode_request(&q, V1_TEST_REQ, NULL), 4104);
	CHECK_INT(q.msg_data_len, 0);
	CHECK_INT(q.msg_type, 6);
}

/*
 * The v1 wire bytes, written out by hand from docs/PROTOCOL.md (host order, as
 * on a unix socket): int32 type, [int32 status,] uint32 length, then the
 * text NUL-padded. The length is the text's strlen, without its NUL.
 */
static void put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

static int first_difference(const void *a, const void *b, size_t len)
{
	const unsigned char *x = a, *y = b;

	for (size_t i = 0; i < len; i++)
		if (x[i] != y[i])
			return (int)i;
	return -1;
}

TEST(v1_response_bytes_are_the_documented_ones)
{
	static const char text[] = "Collection has been started."; /* 28 bytes */
	unsigned char want[140] = { 0 };
	struct proto_v1_response r;

	put32(want, 1);     /* START_RSP */
	put32(want + 4, 1); /* failure */
	put32(want + 8, 28);
	memcpy(want + 12, text, 28);
	memset(&r, 0xa5, sizeof(r));
	proto_v1_encode_response(&r, V1_START_RSP, 1, V1_DETAIL_ALREADY_STARTED);
	CHECK_INT(sizeof(r), 140);
	CHECK_INT(first_difference(&r, want, sizeof(want)), -1);

	memset(want, 0, sizeof(want));
	put32(want, 7); /* TEST_RSP, success, no text: length 0 */
	memset(&r, 0xa5, sizeof(r));
	proto_v1_encode_response(&r, V1_TEST_RSP, 0, NULL);
	CHECK_INT(first_difference(&r, want, sizeof(want)), -1);
}

TEST(v1_response_length_stops_below_128)
{
	char longer[200];
	unsigned char want[140] = { 0 };
	struct proto_v1_response r;

	memset(longer, 'q', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	put32(want, 8); /* DISCONN_RSP */
	put32(want + 8, 127);
	memset(want + 12, 'q', 127); /* the last byte stays the NUL */
	proto_v1_encode_response(&r, V1_DISCONN_RSP, 0, longer);
	CHECK_INT(first_difference(&r, want, sizeof(want)), -1);
}

TEST(v1_request_bytes_are_the_documented_ones)
{
	static unsigned char want[4104];
	static struct proto_v1_request q;

	memset(want, 0, sizeof(want));
	put32(want, 0); /* START_REQ */
	put32(want + 4, 9);
	memcpy(want + 8, "{\"a\":\"b\"}", 9);
	memset(&q, 0xa5, sizeof(q));
	CHECK_INT(proto_v1_encode_request(&q, V1_START_REQ, "{\"a\":\"b\"}"), 4104);
	CHECK_INT(first_difference(&q, want, sizeof(want)), -1);
}

/* A reply read from fixed bytes, as a CANN v1 server sends them. */
TEST(v1_reply_decodes_from_documented_bytes)
{
	struct proto_v1_response r;
	unsigned char bytes[140] = { 0 };
	struct proto_reply out;

	put32(bytes, 3);     /* STOP_RSP */
	put32(bytes + 4, 1); /* failure */
	put32(bytes + 8, 26);
	memcpy(bytes + 12, "Collection is not started.", 26);
	memcpy(&r, bytes, sizeof(r));
	proto_v1_decode_reply(&r, PROTO_CMD_STOP, &out);
	CHECK_INT(out.status, PROTO_NOT_STARTED);
	CHECK_STR(out.detail, V1_DETAIL_NOT_STARTED);
}

static struct proto_reply v1_decode(int32_t type, int32_t code, const char *detail, enum proto_command cmd)
{
	struct proto_v1_response r;
	struct proto_reply out;

	proto_v1_encode_response(&r, type, code, detail);
	proto_v1_decode_reply(&r, cmd, &out);
	return out;
}

TEST(v1_details_tell_already_and_not_started_apart)
{
	CHECK_INT(v1_decode(1, 0, "Started device Id: 0 ", PROTO_CMD_START).status, PROTO_OK);
	CHECK_STR(v1_decode(1, 0, "Started device Id: 0 ", PROTO_CMD_START).detail,
		  "Started device Id: 0 ");
	CHECK_INT(v1_decode(1, 1, V1_DETAIL_ALREADY_STARTED, PROTO_CMD_START).status,
		  PROTO_ALREADY_STARTED);
	CHECK_INT(v1_decode(3, 1, V1_DETAIL_NOT_STARTED, PROTO_CMD_STOP).status, PROTO_NOT_STARTED);
	CHECK_INT(v1_decode(1, 1, "something else", PROTO_CMD_START).status, PROTO_FAIL);
	CHECK_INT(v1_decode(5, 0, NULL, PROTO_CMD_QUIT).status, PROTO_OK);
}

TEST(v1_start_failed_on_no_device_is_not_set_device)
{
	/* CANN lists the devices it started: none when none is set. */
	CHECK_INT(v1_decode(1, 1, "Started device Id: ", PROTO_CMD_START).status, PROTO_NOT_SET_DEVICE);
	/* some started, one failed: a failure */
	CHECK_INT(v1_decode(1, 1, "Started device Id: 0 ", PROTO_CMD_START).status, PROTO_FAIL);
	CHECK_INT(v1_decode(1, 1, V1_DETAIL_INTERNAL, PROTO_CMD_START).status, PROTO_FAIL);
	CHECK_STR(V1_DETAIL_SERVER_EXIT, "Dynamic profiling Server exit");
}

TEST(v1_disconnect_carries_its_reason)
{
	struct proto_reply r = v1_decode(8, 0, V1_DETAIL_IDLE, PROTO_CMD_STOP);

	CHECK_INT(r.status, PROTO_DISCONNECTED);
	CHECK_STR(r.detail, V1_DETAIL_IDLE);
}

TEST(v1_overlong_detail_is_a_bad_reply)
{
	struct proto_v1_response r;
	struct proto_reply out;

	proto_v1_encode_response(&r, 1, 0, "x");
	r.msg_data_len = 128;
	proto_v1_decode_reply(&r, PROTO_CMD_START, &out);
	CHECK_INT(out.status, PROTO_BAD_REPLY);
}

TEST(v1_unterminated_detail_is_cut_safely)
{
	struct proto_v1_response r;
	struct proto_reply out;

	proto_v1_encode_response(&r, 1, 0, NULL);
	memset(r.msg_data, 'z', sizeof(r.msg_data));
	r.msg_data_len = 127;
	proto_v1_decode_reply(&r, PROTO_CMD_START, &out);
	CHECK_INT(strlen(out.detail), 127);
}

TEST(handshake_acks_decode)
{
	struct proto_v2_msg ok = { 0, 0 }, bad = { 0, 1 }, other = { 2, 0 };
	struct proto_v1_response t;
	struct proto_reply r;

	proto_v2_decode_params_ack(&ok, &r);
	CHECK_INT(r.status, PROTO_OK);
	proto_v2_decode_params_ack(&bad, &r);
	CHECK_INT(r.status, PROTO_FAIL);
	proto_v2_decode_params_ack(&other, &r);
	CHECK_INT(r.status, PROTO_BAD_REPLY);
	proto_v1_encode_response(&t, V1_TEST_RSP, 0, NULL);
	proto_v1_decode_test_ack(&t, &r);
	CHECK_INT(r.status, PROTO_OK);
}

TEST(other_generation_told_by_the_first_reply)
{
	struct proto_v2_msg msgs[3] = { { V2_PARAMS_RSP, 0 }, { V2_DISCONNECT_RSP, 0 }, { V2_QUIT_RSP, 0 } };
	struct proto_v1_response disc, test;

	/* A 9.x server's answer to a TEST_REQ: three Msgs, then silence. */
	CHECK_INT(proto_other_generation(PROTO_V1, msgs, sizeof(msgs)), PROTO_V2);
	CHECK_INT(proto_other_generation(PROTO_V1, msgs, sizeof(msgs[0])), PROTO_V2);
	/* Not a whole number of Msgs, or not a PARAMS_RSP first: nothing said. */
	CHECK_INT(proto_other_generation(PROTO_V1, msgs, 12), PROTO_AUTO);
	CHECK_INT(proto_other_generation(PROTO_V1, &msgs[1], 16), PROTO_AUTO);
	CHECK_INT(proto_other_generation(PROTO_V1, msgs, 4), PROTO_AUTO);
	/* A v1 server's answer to a v2 Params: DISCONN_RSP. */
	proto_v1_encode_response(&disc, V1_DISCONN_RSP, 0, "Internal error.");
	CHECK_INT(proto_other_generation(PROTO_V2, &disc, sizeof(struct proto_v2_msg)), PROTO_V1);
	/* Replies of the spoken generation are not the other's. */
	proto_v1_encode_response(&test, V1_TEST_RSP, 0, NULL);
	CHECK_INT(proto_other_generation(PROTO_V1, &test, sizeof(test)), PROTO_AUTO);
	CHECK_INT(proto_other_generation(PROTO_V2, msgs, sizeof(msgs[0])), PROTO_AUTO);
}

UNIT_MAIN()
