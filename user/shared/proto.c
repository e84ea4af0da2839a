// SPDX-License-Identifier: MIT
/* Encoding and decoding of both CANN wire generations: pure functions. */
#include <errno.h>
#include <string.h>

#include "dynprof/proto.h"
#include "shared/array_size.h"

static int json_fits(const char *json, size_t *len)
{
	*len = json ? strnlen(json, PROTO_DATA_MAX) : 0;
	return *len > 0 && *len < PROTO_DATA_MAX;
}

int proto_v2_encode_params(struct proto_v2_params *out, const char *json)
{
	size_t len;

	memset(out, 0, sizeof(*out));
	if (!json_fits(json, &len))
		return -EMSGSIZE;
	out->data_len = (uint32_t)len;
	memcpy(out->data, json, len);
	return (int)sizeof(*out);
}

static int32_t v2_request_type(enum proto_command cmd)
{
	switch (cmd) {
	case PROTO_CMD_START:
		return V2_START_REQ;
	case PROTO_CMD_STOP:
		return V2_STOP_REQ;
	case PROTO_CMD_QUIT:
		return V2_QUIT_REQ;
	}
	return -1;
}

size_t proto_v2_encode_request(struct proto_v2_msg *out, enum proto_command cmd)
{
	out->msg_type = v2_request_type(cmd);
	out->status_code = 0;
	return sizeof(*out);
}

int32_t proto_v1_request_type(enum proto_command cmd)
{
	switch (cmd) {
	case PROTO_CMD_START:
		return V1_START_REQ;
	case PROTO_CMD_STOP:
		return V1_STOP_REQ;
	case PROTO_CMD_QUIT:
		return V1_QUIT_REQ;
	}
	return -1;
}

int proto_v1_encode_request(struct proto_v1_request *out, int32_t type, const char *data)
{
	size_t len = 0;

	memset(out, 0, sizeof(*out));
	out->msg_type = type;
	if (data && *data) {
		if (!json_fits(data, &len))
			return -EMSGSIZE;
		memcpy(out->msg_data, data, len);
	}
	out->msg_data_len = (uint32_t)len;
	return (int)sizeof(*out);
}

static enum proto_status v2_code_status(int32_t code)
{
	switch (code) {
	case V2_SUCCESS:
		return PROTO_OK;
	case V2_FAIL:
		return PROTO_FAIL;
	case V2_ALREADY_START:
		return PROTO_ALREADY_STARTED;
	case V2_NOT_SET_DEVICE:
		return PROTO_NOT_SET_DEVICE;
	case V2_NOT_START:
		return PROTO_NOT_STARTED;
	}
	return PROTO_BAD_REPLY;
}

/* Which codes a v2 server may give to which request. */
static int v2_code_allowed(enum proto_command cmd, int32_t code)
{
	if (code == V2_SUCCESS || code == V2_FAIL)
		return 1;
	if (cmd == PROTO_CMD_START)
		return code == V2_ALREADY_START || code == V2_NOT_SET_DEVICE;
	if (cmd == PROTO_CMD_STOP)
		return code == V2_NOT_START;
	return 0;
}

void proto_v2_decode_reply(const struct proto_v2_msg *in, enum proto_command cmd, struct proto_reply *out)
{
	out->detail[0] = '\0';
	if (in->msg_type == V2_DISCONNECT_RSP) {
		out->status = PROTO_DISCONNECTED;
		return;
	}
	if (in->msg_type != v2_request_type(cmd) + 1 || !v2_code_allowed(cmd, in->status_code)) {
		out->status = PROTO_BAD_REPLY;
		return;
	}
	out->status = v2_code_status(in->status_code);
}

void proto_v2_decode_params_ack(const struct proto_v2_msg *in, struct proto_reply *out)
{
	out->detail[0] = '\0';
	if (in->msg_type == V2_DISCONNECT_RSP)
		out->status = PROTO_DISCONNECTED;
	else if (in->msg_type != V2_PARAMS_RSP)
		out->status = PROTO_BAD_REPLY;
	else if (in->status_code == V2_SUCCESS)
		out->status = PROTO_OK;
	else if (in->status_code == V2_FAIL)
		out->status = PROTO_FAIL;
	else
		out->status = PROTO_BAD_REPLY;
}

/* Copies the detail text, trusting neither its length field nor its NUL. */
static void v1_copy_detail(const struct proto_v1_response *in, struct proto_reply *out)
{
	size_t len = in->msg_data_len;

	if (len >= PROTO_V1_DETAIL_MAX)
		len = PROTO_V1_DETAIL_MAX - 1;
	len = strnlen(in->msg_data, len);
	memcpy(out->detail, in->msg_data, len);
	out->detail[len] = '\0';
}

/*
 * v1 has only success/failure; the detail text tells ALREADY_STARTED and
 * NOT_STARTED apart from a plain failure, as msprof's console does, and a
 * START that failed listing no started device ("Started device Id: ") as
 * NOT_SET_DEVICE.
 */
void proto_v1_decode_reply(const struct proto_v1_response *in, enum proto_command cmd,
			   struct proto_reply *out)
{
	out->detail[0] = '\0';
	if (in->msg_data_len >= PROTO_V1_DETAIL_MAX) {
		out->status = PROTO_BAD_REPLY;
		return;
	}
	v1_copy_detail(in, out);
	if (in->msg_type == V1_DISCONN_RSP) {
		out->status = PROTO_DISCONNECTED;
		return;
	}
	if (in->msg_type != proto_v1_request_type(cmd) + 1 ||
	    (in->status_code != 0 && in->status_code != 1)) {
		out->status = PROTO_BAD_REPLY;
		return;
	}
	if (in->status_code == 0)
		out->status = PROTO_OK;
	else if (cmd == PROTO_CMD_START && !strcmp(out->detail, V1_DETAIL_ALREADY_STARTED))
		out->status = PROTO_ALREADY_STARTED;
	else if (cmd == PROTO_CMD_START && !strcmp(out->detail, V1_DETAIL_NO_DEVICE))
		out->status = PROTO_NOT_SET_DEVICE; /* it started on no device: none is set */
	else if (cmd == PROTO_CMD_STOP && !strcmp(out->detail, V1_DETAIL_NOT_STARTED))
		out->status = PROTO_NOT_STARTED;
	else
		out->status = PROTO_FAIL;
}

void proto_v1_decode_test_ack(const struct proto_v1_response *in, struct proto_reply *out)
{
	out->detail[0] = '\0';
	if (in->msg_data_len >= PROTO_V1_DETAIL_MAX) {
		out->status = PROTO_BAD_REPLY;
		return;
	}
	v1_copy_detail(in, out);
	if (in->msg_type == V1_DISCONN_RSP)
		out->status = PROTO_DISCONNECTED;
	else if (in->msg_type != V1_TEST_RSP)
		out->status = PROTO_BAD_REPLY;
	else
		out->status = in->status_code == 0 ? PROTO_OK : PROTO_FAIL;
}

void proto_v2_encode_response(struct proto_v2_msg *out, int32_t type, int32_t code)
{
	out->msg_type = type;
	out->status_code = code;
}

void proto_v1_encode_response(struct proto_v1_response *out, int32_t type, int32_t code, const char *detail)
{
	size_t len = detail ? strnlen(detail, PROTO_V1_DETAIL_MAX - 1) : 0;

	memset(out, 0, sizeof(*out));
	out->msg_type = type;
	out->status_code = code;
	out->msg_data_len = (uint32_t)len;
	if (len)
		memcpy(out->msg_data, detail, len);
}

enum proto_version proto_other_generation(enum proto_version spoken, const void *in, size_t got)
{
	int32_t type, code;

	if (got < sizeof(struct proto_v2_msg))
		return PROTO_AUTO;
	memcpy(&type, in, sizeof(type));
	memcpy(&code, (const char *)in + sizeof(type), sizeof(code));
	if (spoken == PROTO_V2 && type == V1_DISCONN_RSP)
		return PROTO_V1;
	if (spoken == PROTO_V1 && got < sizeof(struct proto_v1_response) &&
	    got % sizeof(struct proto_v2_msg) == 0 && type == V2_PARAMS_RSP &&
	    (code == V2_SUCCESS || code == V2_FAIL))
		return PROTO_V2;
	return PROTO_AUTO;
}

const char *proto_version_name(enum proto_version v)
{
	switch (v) {
	case PROTO_AUTO:
		return "auto";
	case PROTO_V1:
		return "v1";
	case PROTO_V2:
		return "v2";
	}
	return "?";
}

const char *proto_command_name(enum proto_command cmd)
{
	switch (cmd) {
	case PROTO_CMD_START:
		return "start";
	case PROTO_CMD_STOP:
		return "stop";
	case PROTO_CMD_QUIT:
		return "quit";
	}
	return "?";
}

const char *proto_status_name(enum proto_status s)
{
	static const char *const names[] = {
		[PROTO_OK] = "success",
		[PROTO_FAIL] = "fail",
		[PROTO_ALREADY_STARTED] = "already started",
		[PROTO_NOT_SET_DEVICE] = "device not set",
		[PROTO_NOT_STARTED] = "not started",
		[PROTO_DISCONNECTED] = "disconnected",
		[PROTO_BAD_REPLY] = "bad reply",
	};

	if ((unsigned)s < ARRAY_SIZE(names))
		return names[s];
	return "?";
}
