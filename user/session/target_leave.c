// SPDX-License-Identifier: MIT
/* Leaving an unused connection so that CANN survives it (see target_leave.h). */
#include <unistd.h>

#include "shared/clock.h"
#include "shared/fdio.h"
#include "session/target_leave.h"

#define LEAVE_SEND_MS 500 /* one message into an empty socket buffer */
#define LEAVE_ACK_MS 300  /* a server busy with another client answers later, or never */

static void leave_v2(int fd)
{
	struct proto_v2_params p;
	struct proto_v2_msg ack;

	if (proto_v2_encode_params(&p, "{}") < 0)
		return;
	if (fdio_write_full(fd, &p, sizeof(p), clock_ms() + LEAVE_SEND_MS))
		return;
	if (fdio_read_full(fd, &ack, sizeof(ack), clock_ms() + LEAVE_ACK_MS, NULL)) {
		/* No ack (yet): the Params is queued whole, which is what keeps the server alive. */
	}
}

static void leave_v1(int fd)
{
	struct proto_v1_request req;
	struct proto_v1_response rsp;

	if (proto_v1_encode_request(&req, V1_TEST_REQ, NULL) < 0 ||
	    fdio_write_full(fd, &req, sizeof(req), clock_ms() + LEAVE_SEND_MS) ||
	    fdio_read_full(fd, &rsp, sizeof(rsp), clock_ms() + LEAVE_ACK_MS, NULL))
		return;
	if (proto_v1_encode_request(&req, V1_QUIT_REQ, NULL) < 0 ||
	    fdio_write_full(fd, &req, sizeof(req), clock_ms() + LEAVE_SEND_MS))
		return;
	if (fdio_read_full(fd, &rsp, sizeof(rsp), clock_ms() + LEAVE_ACK_MS, NULL)) {
		/* The QUIT is sent; its answer does not matter. */
	}
}

void target_leave(int fd, enum proto_version proto)
{
	if (fd < 0)
		return;
	if (proto == PROTO_V1)
		leave_v1(fd);
	else
		leave_v2(fd);
	close(fd);
}
