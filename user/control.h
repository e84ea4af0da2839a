/* SPDX-License-Identifier: MIT */
/*
 * --control=SPEC: commands from another program while dynprof runs, in the
 * spirit of perf's --control, each answered with an acknowledgement.
 *
 *   fifo:CTL[,ACK]  CTL a FIFO dynprof reads lines from (made, mode 0600,
 *                   when missing); ACK an optional FIFO it writes one line
 *                   per command to (made when missing).
 *   unix:PATH       a unix stream socket dynprof listens on (made, mode
 *                   0600, removed at exit; a stale socket is replaced, any
 *                   other file is refused). Each client sends lines and
 *                   reads one reply line per command on its connection.
 *   PATH            an existing FIFO means fifo:PATH, anything else unix:PATH.
 *
 * Lines are the --commands language (rule.h). Replies: "ack <command>" when
 * the command has been carried out, or "error: <why>".
 */
#ifndef DYNPROF_CONTROL_H
#define DYNPROF_CONTROL_H

#include <poll.h>
#include <stddef.h>

struct control;

/* NULL with one line in err (naming the path and what is wrong). */
struct control *control_open(const char *spec, char *err, size_t errlen);
void control_close(struct control *ctl);

/* Fill pollfds (listening socket, clients, the FIFO); returns how many. */
int control_pollfds(const struct control *ctl, struct pollfd *pfds, int max);

/*
 * Handle a pollfd that control_pollfds filled and that fired (others are
 * ignored): accept clients, read, and call `line` for every complete line
 * (blank lines included, without the newline). `client` identifies where it
 * came from, for control_reply.
 */
typedef void (*control_line_fn)(void *ctx, int client, const char *line);
void control_event(struct control *ctl, const struct pollfd *pfd, control_line_fn line, void *ctx);

/* Send one reply line (no newline needed) to `client`; a gone client is skipped. */
void control_reply(struct control *ctl, int client, const char *text);

#endif /* DYNPROF_CONTROL_H */
