// SPDX-License-Identifier: MIT
/*
 * One v1 connection (CANN releases from late 2022 until v2): 4104-byte
 * requests, 140-byte responses with a detail text. Every end the server
 * chooses (too many requests, idle, an unknown type, a request whose
 * msgDataLen is not the length of its NUL-padded msgData, a failed read,
 * exit) is DISCONN_RSP with CANN's reason, then QUIT_RSP, as CANN sends.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "dynprof/proto.h"
#include "agent/conv.h"
#include "agent/log.h"
#include "agent/window.h"

#define V1_MAX_STARTS 10001 /* successful STARTs per process lifetime, as CANN's v1 server */

/* CANN's v1 texts (docs/PROTOCOL.md Part 2 section 6). */
#define V1_DETAIL_STARTED V1_DETAIL_NO_DEVICE /* followed by the ids */
#define V1_DETAIL_START_LIMIT "Start times over max limit."

enum step { CONTINUE, END };

/* Successful STARTs so far; only the server thread touches it. */
static int v1_starts;

static int send_rsp(struct agent_conn *c, int32_t type, int32_t code, const char *detail)
{
	struct proto_v1_response r;

	proto_v1_encode_response(&r, type, code, detail);
	return conn_send(c, &r, sizeof(r));
}

/*
 * Open a window; NULL on success, else the failure's detail text. No
 * device: CANN lists the devices it started, none (its failure text).
 */
static const char *try_start(const char *json, struct agent_devset *devs)
{
	if (window_collecting())
		return V1_DETAIL_ALREADY_STARTED;
	if (v1_starts >= V1_MAX_STARTS)
		return V1_DETAIL_START_LIMIT;
	switch (window_start(1, json, devs)) {
	case WINDOW_STARTED:
		v1_starts++;
		return NULL;
	case WINDOW_ALREADY:
		return V1_DETAIL_ALREADY_STARTED;
	case WINDOW_NO_DEVICE:
		return V1_DETAIL_NO_DEVICE;
	case WINDOW_FAILED:
		break;
	}
	return V1_DETAIL_INTERNAL;
}

static int answer_start(struct agent_conn *c, const char *json)
{
	char ids[PROTO_V1_DETAIL_MAX - sizeof(V1_DETAIL_STARTED)];
	char detail[PROTO_V1_DETAIL_MAX];
	struct agent_devset devs;
	const char *fail = try_start(json, &devs);

	if (fail) {
		agent_log("start -> 1 %s", fail);
		return send_rsp(c, V1_START_RSP, 1, fail);
	}
	/* CANN lists the ids each followed by a blank: "Started device Id: 0 ". */
	agent_devset_format(&devs, " ", 1, ids, sizeof(ids));
	snprintf(detail, sizeof(detail), "%s%s", V1_DETAIL_STARTED, ids);
	agent_log("start -> 0 %s", detail);
	return send_rsp(c, V1_START_RSP, 0, detail);
}

static int answer_stop(struct agent_conn *c)
{
	const char *fail = NULL;

	switch (window_stop()) {
	case WINDOW_STOPPED:
		break;
	case WINDOW_NOT_STARTED:
		fail = V1_DETAIL_NOT_STARTED;
		break;
	case WINDOW_STOP_FAILED:
		fail = V1_DETAIL_INTERNAL;
		break;
	}
	agent_log("stop -> %d%s%s", fail ? 1 : 0, fail ? " " : "", fail ? fail : "");
	return send_rsp(c, V1_STOP_RSP, fail ? 1 : 0, fail);
}

/* QUIT handling: the window stopped and finalised, QUIT_RSP ("Internal error." when that failed). */
static int quit_rsp(struct agent_conn *c)
{
	int failed = window_stop() == WINDOW_STOP_FAILED;

	return send_rsp(c, V1_QUIT_RSP, failed, failed ? V1_DETAIL_INTERNAL : NULL);
}

/* The server ends the connection: DISCONN_RSP with the reason, then QUIT_RSP. */
static void disconnect(struct agent_conn *c, const char *why)
{
	agent_log("disconnect: %s", why);
	if (send_rsp(c, V1_DISCONN_RSP, 0, why)) {
		/* The client is gone: the window is finalised all the same. */
	}
	if (quit_rsp(c)) {
		/* Nothing more to tell a client that is gone. */
	}
}

static enum step quit(struct agent_conn *c)
{
	agent_log("quit");
	if (!quit_rsp(c))
		disconnect(c, V1_DETAIL_CLIENT_QUIT);
	return END;
}

static enum step answer(struct agent_conn *c, const struct proto_v1_request *req)
{
	int rc;

	switch (req->msg_type) {
	case V1_TEST_REQ:
		rc = send_rsp(c, V1_TEST_RSP, 0, NULL);
		break;
	case V1_START_REQ:
		conn_reset_idle(c); /* v1 restarts its idle count at every START_REQ */
		rc = answer_start(c, req->msg_data);
		break;
	case V1_STOP_REQ:
		rc = answer_stop(c);
		break;
	case V1_QUIT_REQ:
		return quit(c);
	default:
		agent_log("request type %d unknown", req->msg_type);
		disconnect(c, V1_DETAIL_INTERNAL);
		return END;
	}
	if (rc)
		disconnect(c, V1_DETAIL_INTERNAL);
	return rc ? END : CONTINUE;
}

#define V1_REQUEST_REST_MS 200 /* the rest of a request once its first bytes came */

/* msgData must be a C string whose length msgDataLen states exactly. */
static int well_formed(const struct proto_v1_request *req)
{
	size_t len = strnlen(req->msg_data, sizeof(req->msg_data));

	return len < sizeof(req->msg_data) && req->msg_data_len == len;
}

/* Wait for a request and read it; END when the connection is over. */
static enum step receive(struct agent_conn *c, struct proto_v1_request *req)
{
	int rc;

	switch (conn_wait(c)) {
	case CONN_READABLE:
		break;
	case CONN_IDLE:
		disconnect(c, V1_DETAIL_IDLE);
		return END;
	case CONN_SHUTDOWN:
		disconnect(c, V1_DETAIL_SERVER_EXIT);
		return END;
	case CONN_GONE:
		agent_log("client gone");
		disconnect(c, V1_DETAIL_INTERNAL);
		return END;
	}
	/*
	 * CANN reads a request with one recv(): whatever part has arrived is
	 * all it gets, so a short message (a v2 Params is 4100 bytes) is
	 * answered at once. The agent waits only briefly for the rest, so that
	 * its answer comes before a client's 1-s handshake timeout, as CANN's.
	 */
	rc = conn_read(c, req, sizeof(*req), V1_REQUEST_REST_MS, NULL);
	if (rc) {
		/* A failed recv: "Internal error.", QUIT handling, close (CANN's spin on a
		 * stale EAGAIN is not copied). */
		conn_log_gone(rc);
		disconnect(c, V1_DETAIL_INTERNAL);
		return END;
	}
	if (!well_formed(req)) {
		agent_log("request type %d: msgDataLen %u does not match its data", req->msg_type,
			  req->msg_data_len);
		disconnect(c, V1_DETAIL_INTERNAL);
		return END;
	}
	return CONTINUE;
}

void conv_v1_serve(struct agent_conn *c)
{
	struct proto_v1_request req;

	while (receive(c, &req) == CONTINUE && answer(c, &req) == CONTINUE) {
		if (conn_count_request(c)) {
			disconnect(c, V1_DETAIL_TOO_MANY);
			return;
		}
	}
}
