/* SPDX-License-Identifier: MIT */
/*
 * `dynprof --remote=PATH CMD...`: the client of a running dynprof's
 * --control=unix:PATH. Sends the command words joined by spaces as one
 * line, prints every reply line on standard output until the one that
 * ends it ("ack ..." or "error: ..."); `events` goes on printing until
 * SIGINT/SIGTERM or until dynprof closes the connection.
 *
 * Exit status: 0 ack, 1 "error:" (dynprof refused the command, or the
 * client), 2 the socket cannot be reached (none, refused, permission
 * denied), the answer did not come within --timeout (default 60 s; none
 * for events) or the connection ended before it; 255 an option error.
 */
#ifndef DYNPROF_REMOTE_CLIENT_H
#define DYNPROF_REMOTE_CLIENT_H

#include "config/options.h"
#include "shared/compiler.h"

int remote_client_run(const struct options *o) DP_MUST_CHECK;

#endif /* DYNPROF_REMOTE_CLIENT_H */
