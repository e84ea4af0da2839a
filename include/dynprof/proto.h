/* SPDX-License-Identifier: MIT */
/*
 * The CANN dynamic-profiling socket protocol, both wire generations.
 *
 * Layouts are native-endian, naturally aligned, unpacked, exactly as the
 * CANN server reads and writes them: v2 from the public oam-tools source of
 * the dynamic-profiling server, v1 from MindStudio's public msprof (README's
 * "where dynprof differs from msprof" lists what we do differently).
 * The static asserts below pin every size: a change here breaks the wire.
 *
 * Encoding and decoding are pure functions (user/shared/proto.c) shared by the
 * client (dynprof) and the server (libdynprof_agent).
 */
#ifndef DYNPROF_PROTO_H
#define DYNPROF_PROTO_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#define DYNPROF_SOCKET_PREFIX "dynamic_profiling_socket_"
#define DYNPROF_SOCKET_PREFIX_ALT "dyn_prof_sock_" /* some 8.x/9.0 pre-releases */
#define DYNPROF_KEY_ENV "DYNAMIC_PROFILING_KEY_PID"
#define DYNPROF_MODE_ENV "PROFILING_MODE"
#define DYNPROF_MODE_DYNAMIC "dynamic"

#define PROTO_DATA_MAX 4096     /* params JSON must be shorter than this */
#define PROTO_V1_DETAIL_MAX 128 /* v1 response detail text */

/*
 * CANN's limits, as its servers count them (docs/PROTOCOL.md Part 2 sections 2
 * and 3). 8.5.0 (the abstract socket) has none of them.
 *  9.x: 101 START/STOP answered per connection (QUIT not counted), then
 *       DISCONNECT(7,0), QUIT handling, (6,x).
 *  v1:  101 requests including TEST_REQ (100 commands after the
 *       handshake), then DISCONN_RSP "Receive too much requests from
 *       client." and QUIT_RSP.
 *  Idle: 1-s receive timeouts while not collecting, counted over the whole
 *       connection (v1: the count restarts at every START_REQ); the
 *       server disconnects at the 1801st.
 *  Accepts: 128 connections per process lifetime (9.x, v1), then the
 *       server stops listening for good.
 */
#define PROTO_V2_MAX_REQUESTS 101
#define PROTO_V1_MAX_REQUESTS 101
#define PROTO_IDLE_LIMIT_TICKS 1800
#define PROTO_MAX_ACCEPTS 128

enum proto_version {
	PROTO_AUTO = 0,
	PROTO_V1 = 1,
	PROTO_V2 = 2,
};

/* What a client asks of a server, independent of the wire generation. */
enum proto_command {
	PROTO_CMD_START,
	PROTO_CMD_STOP,
	PROTO_CMD_QUIT,
};

/* What a server answered, independent of the wire generation. */
enum proto_status {
	PROTO_OK = 0,
	PROTO_FAIL = 1,
	PROTO_ALREADY_STARTED = 2,
	PROTO_NOT_SET_DEVICE = 3,
	PROTO_NOT_STARTED = 4,
	PROTO_DISCONNECTED = 5, /* unsolicited DISCONNECT from the server */
	PROTO_BAD_REPLY = 6,    /* a reply that does not fit the protocol */
};

/* ---- v2 (8.x, 9.x) ---------------------------------------------------- */

enum proto_v2_type {
	V2_PARAMS_RSP = 0,
	V2_START_REQ = 1,
	V2_START_RSP = 2,
	V2_STOP_REQ = 3,
	V2_STOP_RSP = 4,
	V2_QUIT_REQ = 5,
	V2_QUIT_RSP = 6,
	V2_DISCONNECT_RSP = 7,
};

enum proto_v2_code {
	V2_SUCCESS = 0,
	V2_FAIL = 1,
	V2_ALREADY_START = 2,
	V2_NOT_SET_DEVICE = 3,
	V2_NOT_START = 4,
};

struct proto_v2_params {
	uint32_t data_len;
	char data[PROTO_DATA_MAX];
};

struct proto_v2_msg {
	int32_t msg_type;
	int32_t status_code;
};

static_assert(sizeof(struct proto_v2_params) == 4100, "v2 Params is 4100 bytes");
static_assert(sizeof(struct proto_v2_msg) == 8, "v2 Msg is 8 bytes");

/* ---- v1 (late 2022 until v2) ------------------------------------------ */

enum proto_v1_type {
	V1_START_REQ = 0,
	V1_START_RSP = 1,
	V1_STOP_REQ = 2,
	V1_STOP_RSP = 3,
	V1_QUIT_REQ = 4,
	V1_QUIT_RSP = 5,
	V1_TEST_REQ = 6,
	V1_TEST_RSP = 7,
	V1_DISCONN_RSP = 8,
};

struct proto_v1_request {
	int32_t msg_type;
	uint32_t msg_data_len;
	char msg_data[PROTO_DATA_MAX];
};

struct proto_v1_response {
	int32_t msg_type;
	int32_t status_code; /* 0 success, 1 failure */
	uint32_t msg_data_len;
	char msg_data[PROTO_V1_DETAIL_MAX];
};

static_assert(sizeof(struct proto_v1_request) == 4104, "v1 Request is 4104 bytes");
static_assert(sizeof(struct proto_v1_response) == 140, "v1 Response is 140 bytes");

/* v1 detail strings the CANN server sends (and our agent sends too). */
#define V1_DETAIL_ALREADY_STARTED "Collection has been started."
#define V1_DETAIL_NOT_STARTED "Collection is not started."
#define V1_DETAIL_CLIENT_QUIT "Client request quit."
#define V1_DETAIL_IDLE "Idle link too long time."
#define V1_DETAIL_TOO_MANY "Receive too much requests from client."
#define V1_DETAIL_SERVER_EXIT "Dynamic profiling Server exit" /* no period, as CANN */
#define V1_DETAIL_INTERNAL "Internal error."
/* A START's device list; alone (no id after it) with a failure: no device set. */
#define V1_DETAIL_NO_DEVICE "Started device Id: "

/* ---- a decoded reply, either generation -------------------------------- */

struct proto_reply {
	enum proto_status status;
	char detail[PROTO_V1_DETAIL_MAX]; /* v1 detail text, "" for v2 */
};

/* The largest message either side reads or writes. */
#define PROTO_MAX_WIRE_SIZE sizeof(struct proto_v1_request)

/*
 * Encoding. Each returns the number of bytes to send (the full struct) or
 * -EMSGSIZE when the JSON does not fit: 0 < strlen(json) < 4096.
 * Unused bytes are zeroed: v1 servers reject NUL-padding mismatches.
 */
int proto_v2_encode_params(struct proto_v2_params *out, const char *json);
size_t proto_v2_encode_request(struct proto_v2_msg *out, enum proto_command cmd);
int proto_v1_encode_request(struct proto_v1_request *out, int32_t type, const char *data);

/* The v1 request type that carries a command (START carries the params). */
int32_t proto_v1_request_type(enum proto_command cmd);

/*
 * Decoding a server's reply to `cmd`. An unsolicited DISCONNECT decodes to
 * PROTO_DISCONNECTED whatever was asked; anything that is not the matching
 * response decodes to PROTO_BAD_REPLY.
 */
void proto_v2_decode_reply(const struct proto_v2_msg *in, enum proto_command cmd,
			   struct proto_reply *out);
void proto_v1_decode_reply(const struct proto_v1_response *in, enum proto_command cmd,
			   struct proto_reply *out);

/* The reply to the first exchange: v2 params acknowledgement, v1 TEST. */
void proto_v2_decode_params_ack(const struct proto_v2_msg *in, struct proto_reply *out);
void proto_v1_decode_test_ack(const struct proto_v1_response *in, struct proto_reply *out);

/* Server side: fill a response. Detail may be NULL (v1 only). */
void proto_v2_encode_response(struct proto_v2_msg *out, int32_t type, int32_t code);
void proto_v1_encode_response(struct proto_v1_response *out, int32_t type, int32_t code,
			      const char *detail);

/*
 * The first reply of a server that speaks the other generation, told by its
 * bytes (docs/PROTOCOL.md Part 2, section 0 item 17): `got` bytes of the reply to
 * our handshake in `spoken`, whole or cut short by a timeout or a close.
 *  - spoken v2: a v1 server answers our 4100-byte Params (a short v1
 *    request to it) with DISCONN_RSP, type 8, which v2 does not have;
 *  - spoken v1: a v2 server takes our TEST_REQ as Params and answers with
 *    8-byte Msgs, PARAMS_RSP (0, 0|1) first, then stays silent: fewer bytes
 *    than a v1 response, a whole number of Msgs.
 * Returns the generation the server speaks, or PROTO_AUTO when the bytes
 * do not show it.
 */
enum proto_version proto_other_generation(enum proto_version spoken, const void *in, size_t got);

const char *proto_version_name(enum proto_version v);
const char *proto_command_name(enum proto_command cmd);
const char *proto_status_name(enum proto_status s);

#endif /* DYNPROF_PROTO_H */
