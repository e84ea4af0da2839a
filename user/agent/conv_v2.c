// SPDX-License-Identifier: MIT
/*
 * One v2 connection: Params, then Msg requests, each answered
 * Msg{type + 1, code}. As CANN 9.x: the limits, an unknown type, the
 * client's death and the server's exit end it with DISCONNECT(7,0) then
 * QUIT handling (an open window stopped and finalised) and QUIT_RSP.
 * As CANN 8.5.0 (cfg->abstract): no limits and no DISCONNECT type; the
 * window outlives its client; an unknown type or exit ends the connection
 * without a word.
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
 * Nothing within 1 s: the client is left without a word (it reports the
 * server busy). Part of a Params: FAIL, and the server ends (CANN).
 */
static enum step read_params(struct agent_conn *c, char *json)
{
	struct proto_v2_params p;
	size_t got = 0, len;
	int rc = conn_read(c, &p, sizeof(p), PARAMS_TIMEOUT_MS, &got);

	if (rc == -ETIMEDOUT && got == 0) {
		agent_log("params: none within 1 s, client left connected, unread");
		return END;
	}
	if (rc) {
		agent_log("params: short (%zu bytes)", got);
		send_msg(c, V2_PARAMS_RSP, V2_FAIL);
		/* CANN: a short read (0 bytes: connected and closed) ends its accept loop. */
		c->ends_server = 1;
		return END;
	}
	/*
	 * CANN checks no dataLen: 0 gives an empty JSON (START fails), up to
	 * 4096 is read from the buffer (CANN reads past it beyond: not copied).
	 */
	len = p.data_len < PROTO_DATA_MAX ? p.data_len : PROTO_DATA_MAX;
	memcpy(json, p.data, len);
	json[len] = '\0';
	agent_log("params: dataLen %u", p.data_len);
	return send_msg(c, V2_PARAMS_RSP, V2_SUCCESS) ? END : CONTINUE;
}

static int32_t start_code(const char *json)
{
	struct agent_devset devs;

	switch (window_start(0, json, &devs)) {
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

/* QUIT handling: an open window is stopped and finalised; (6,0), or (6,1) when that failed. */
static void quit_handling(struct agent_conn *c)
{
	int32_t code = window_stop() == WINDOW_STOP_FAILED ? V2_FAIL : V2_SUCCESS;

	if (send_msg(c, V2_QUIT_RSP, code)) {
		/* The client is gone: the window is finalised all the same. */
	}
}

/*
 * 9.x ends a connection with DISCONNECT(7,0), then QUIT handling, even
 * into a connection whose client is gone (the sends fail, the window is
 * finalised). 8.5.0 has no DISCONNECT and sends nothing.
 */
static void disconnect(struct agent_conn *c, const char *why)
{
	agent_log("%s: %s", why, c->cfg->abstract ? "connection ended, nothing sent" : "disconnect");
	if (c->cfg->abstract)
		return;
	if (send_msg(c, V2_DISCONNECT_RSP, V2_SUCCESS)) {
		/* Into EPIPE when the client died: QUIT handling follows regardless. */
	}
	quit_handling(c);
}

static enum step quit(struct agent_conn *c)
{
	agent_log("quit");
	quit_handling(c);
	return END;
}

/*
 * A failed command read (EOF: the client died; a short message): 9.x
 * sends DISCONNECT and QUIT handling into it, which finalises an open
 * window; 8.5.0 goes back to accept, leaving the window open.
 */
static enum step client_gone(struct agent_conn *c, int rc)
{
	if (rc)
		conn_log_gone(rc);
	else
		agent_log("client gone");
	disconnect(c, window_collecting() ? "command read failed mid-window" : "command read failed");
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
		agent_log("request type %d unknown", req->msg_type);
		disconnect(c, "unknown request");
		return END;
	}
	agent_log("%s -> %d", req->msg_type == V2_START_REQ ? "start" : "stop", code);
	return send_msg(c, req->msg_type + 1, code) ? client_gone(c, -EPIPE) : CONTINUE;
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
		disconnect(c, "idle limit");
		return END;
	case CONN_SHUTDOWN:
		disconnect(c, "server exit");
		return END;
	case CONN_GONE:
		return client_gone(c, 0);
	}
	rc = conn_read(c, &req, sizeof(req), CONN_IO_TIMEOUT_MS, NULL);
	if (rc)
		return client_gone(c, rc);
	if (answer(c, &req, json) == END)
		return END;
	if (conn_count_request(c)) {
		agent_log("%d requests answered", c->requests);
		disconnect(c, "request limit");
		return END;
	}
	return CONTINUE;
}

void conv_v2_serve(struct agent_conn *c)
{
	char json[PROTO_DATA_MAX + 1];

	if (read_params(c, json) == END)
		return;
	while (serve_one(c, json) == CONTINUE)
		;
}
