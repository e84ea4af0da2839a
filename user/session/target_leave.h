/* SPDX-License-Identifier: MIT */
/*
 * Leaving a connected server that will not be used, in a way CANN's
 * server survives.
 *
 * A CANN v2 server (8.5.0, 9.x) reads one 4100-byte Params right after
 * accept; a short or empty read (a client that connects and closes without
 * sending) ends its accept loop for good (9.x also unlinks its socket). So
 * a connection dynprof will not use is never just closed: v2 gets a Params
 * whose JSON is "{}" (9.x overlays params, so nothing changes), in one
 * write, its (0,x) ack is read with a short timeout, then the connection
 * is closed: the server sees an ordinary end of a client. v1 gets TEST_REQ
 * then QUIT_REQ. The fd is closed in every case.
 */
#ifndef DYNPROF_TARGET_LEAVE_H
#define DYNPROF_TARGET_LEAVE_H

#include "dynprof/proto.h"

void target_leave(int fd, enum proto_version proto);

#endif /* DYNPROF_TARGET_LEAVE_H */
