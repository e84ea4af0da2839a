// SPDX-License-Identifier: MIT
/*
 * One v2 connection (CANN 8.x/9.x): Params, then Msg requests, each
 * answered Msg{type + 1, code}; QUIT and the limits end it with the
 * DISCONNECT + QUIT_RSP pair CANN sends.
 */
#include <errno.h>
#include <string.h>

#include "dynprof/proto.h"
#include "agent/conv.h"
#include "agent/log.h"
#include "agent/window.h"

#define PARAMS_TIMEOUT_MS 1000 /* CANN's SO_RCVTIMEO for the Params */

enum step { CONTINUE, END };

static int send_msg(struct agent_conn *c, int32_t type, int32_t code)
{
	struct proto_v2_msg m;

	proto_v2_encode_response(&m, type, code);
	return conn_send(c, &m, sizeof(m));
}

/*
 * Nothing within 1 s: the client is dropped without a word (it reports
 * the server busy). Part of a Params, or an impossible length: FAIL.
 */
static enum step read_params(struct agent_conn *c, char *json)
{
	struct proto_v2_params p;
	size_t got = 0;
	int rc = conn_read(c, &p, sizeof(p), PARAMS_TIMEOUT_MS, &got);

	if (rc == -ETIMEDOUT && got == 0) {
		agent_log("params: none within 1 s, client left connected, unread");
		return END;
	}
	if (rc || p.data_len == 0 || p.data_len >= PROTO_DATA_MAX) {
		agent_log("params: short or malformed (%zu bytes, dataLen %u)", got,
			  rc ? 0 : p.data_len);
		send_msg(c, V2_PARAMS_RSP, V2_FAIL);
		/* CANN: a short read (0 bytes: connected and closed) ends its accept loop. */
		c->ends_server = rc != 0;
		return END;
	}
	memcpy(json, p.data, p.data_len);
	json[p.data_len] = '\0';
	agent_log("params: %u bytes", p.data_len);
	return send_msg(c, V2_PARAMS_RSP, V2_SUCCESS) ? END : CONTINUE;
}

static int32_t start_code(const char *json)
{
	struct agent_devset devs;

	switch (window_start(json, &devs)) {
	case WINDOW_STARTED:
		return V2_SUCCESS;
	case WINDOW_ALREADY:
		return V2_ALREADY_START;
	case WINDOW_NO_DEVICE:
		return V2_NOT_SET_DEVICE;
	case WINDOW_FAILED:
		break;
	}
	return V2_FAIL;
}

static int32_t stop_code(void)
{
	switch (window_stop()) {
	case WINDOW_STOPPED:
		return V2_SUCCESS;
	case WINDOW_NOT_STARTED:
		return V2_NOT_START;
	case WINDOW_STOP_FAILED:
		break;
	}
	return V2_FAIL;
}

/* The end of every connection the server ends: DISCONNECT, then a QUIT. */
static void disconnect(struct agent_conn *c)
{
	if (send_msg(c, V2_DISCONNECT_RSP, V2_SUCCESS))
		return;
	window_stop();
	send_msg(c, V2_QUIT_RSP, V2_SUCCESS);
}

static enum step quit(struct agent_conn *c)
{
	window_stop();
	agent_log("quit");
	if (!send_msg(c, V2_QUIT_RSP, V2_SUCCESS))
		disconnect(c);
	return END;
}

static enum step answer(struct agent_conn *c, const struct proto_v2_msg *req, const char *json)
{
	int32_t code;

	switch (req->msg_type) {
	case V2_START_REQ:
		code = start_code(json);
		break;
	case V2_STOP_REQ:
		code = stop_code();
		break;
	case V2_QUIT_REQ:
		return quit(c);
	default:
		agent_log("request type %d unknown: closing", req->msg_type);
		return END;
	}
	agent_log("%s -> %d", req->msg_type == V2_START_REQ ? "start" : "stop", code);
	return send_msg(c, req->msg_type + 1, code) ? END : CONTINUE;
}

/* One request; END when the connection is over. */
static enum step serve_one(struct agent_conn *c, const char *json)
{
	struct proto_v2_msg req;
	int rc;

	switch (conn_wait(c)) {
	case CONN_READABLE:
		break;
	case CONN_IDLE:
		agent_log("idle %d s: disconnect", c->cfg->idle_timeout_sec);
		disconnect(c);
		return END;
	case CONN_SHUTDOWN:
		agent_log("server exit: disconnect");
		disconnect(c);
		return END;
	case CONN_GONE:
		agent_log("client gone");
		return END;
	}
	rc = conn_read(c, &req, sizeof(req), CONN_IO_TIMEOUT_MS, NULL);
	if (rc) {
		conn_log_gone(rc);
		return END;
	}
	if (answer(c, &req, json) == END)
		return END;
	if (conn_count_request(c)) {
		agent_log("%d requests: disconnect", c->requests);
		disconnect(c);
		return END;
	}
	return CONTINUE;
}

void conv_v2_serve(struct agent_conn *c)
{
	char json[PROTO_DATA_MAX];

	if (read_params(c, json) == END)
		return;
	while (serve_one(c, json) == CONTINUE)
		;
}
