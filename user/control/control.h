/* SPDX-License-Identifier: MIT */
/*
 * --control=SPEC: commands from another program while dynprof runs, in the
 * spirit of perf's --control, each answered with an acknowledgement.
 *
 *   fifo:CTL[,ACK]  CTL a FIFO dynprof reads lines from (made, mode 0600,
 *                   when missing); ACK an optional FIFO it writes one line
 *                   per command to (made when missing). Replies that find
 *                   ACK full (nobody reading) are dropped, never waited for.
 *   unix:PATH       a unix stream socket dynprof listens on (made, mode
 *                   0600, removed at exit; a stale socket is replaced, any
 *                   other file is refused, and so is a socket another
 *                   program still answers on). Each client sends lines and
 *                   reads one reply line per command on its connection.
 *   PATH            an existing FIFO means fifo:PATH, anything else unix:PATH.
 *
 * Lines are the --commands language (rule.h). Replies: "ack <command>" when
 * the command has been carried out, or "error: <why>".
 *
 * Lines hold at most CONTROL_LINE_MAX - 1 bytes before their newline; a
 * longer one is answered "error: line too long" and skipped up to its
 * newline. A client that shuts down only its sending side still gets its
 * replies (and its last line counts without a newline, as on stdin); one
 * that closes is dropped, with its unterminated last line. A client that
 * does not read its replies until its socket buffer fills (4 MiB asked for,
 * SO_SNDBUFFORCE as root: a whole `status --json` of thousands of targets
 * fits) is dropped too: dynprof never waits for a control client.
 *
 * A socket client may turn its connection into a stream of events
 * (control_stream, the `events` command): from then on it gets every
 * --events=json line, its replies go the same way, and what it sends is
 * read only to see it close. Its lines wait in a bounded queue of its own
 * (stream.h) instead of its socket buffer: a slow reader loses lines
 * (counted, then told), never its connection, and never slows dynprof.
 *
 * Errors: convention 2 of docs/ERRORS.md (control_open: NULL, the line in err).
 */
#ifndef DYNPROF_CONTROL_H
#define DYNPROF_CONTROL_H

#include <poll.h>
#include <stddef.h>

#include "shared/compiler.h"

#define CONTROL_LINE_MAX 4096  /* bytes of one line, its newline included */
#define CONTROL_MAX_CLIENTS 16 /* connected at a time; more are told so and closed */
/* Enough pollfds for control_pollfds: the FIFO or listener and every client. */
#define CONTROL_MAX_POLLFDS (1 + CONTROL_MAX_CLIENTS)

struct control;

/* NULL with one line in err (naming the path and what is wrong). */
struct control *control_open(const char *spec, char *err, size_t errlen);
/* Closes every fd; removes the FIFOs and socket it made, if still the same files. */
void control_close(struct control *ctl);

/* Fill pollfds (listening socket, clients, the FIFO); returns how many. */
int control_pollfds(const struct control *ctl, struct pollfd *pfds, int max);

/*
 * Handle a pollfd that control_pollfds filled and that fired (others are
 * ignored): accept clients, read, and call `line` for every complete line
 * (blank lines included, without the newline and a trailing '\r').
 * `client` identifies where it came from, for control_reply: 0 for the
 * FIFO, a small positive number per socket client, not reused while that
 * client is connected. `line` may call control_reply.
 */
typedef void (*control_line_fn)(void *ctx, int client, const char *line);
void control_event(struct control *ctl, const struct pollfd *pfd, control_line_fn line, void *ctx);

/*
 * Send one reply line (no newline needed; anything from a newline on is
 * cut) to `client`; a gone client is skipped. Never blocks.
 */
void control_reply(struct control *ctl, int client, const char *text);

/*
 * Make socket client `client` a stream of events (above) until it closes.
 * 0, or -1 with the reason in err ("events needs a unix control socket"
 * for the FIFO, which has no one reader to stream to).
 */
int control_stream(struct control *ctl, int client, char *err, size_t errlen) DP_MUST_CHECK;

#endif /* DYNPROF_CONTROL_H */
