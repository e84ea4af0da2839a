/* SPDX-License-Identifier: MIT */
/*
 * --control's clients, each running its own command script (script.h)
 * whose acknowledgements go back to it (control.h).
 */
#ifndef DYNPROF_REMOTE_H
#define DYNPROF_REMOTE_H

#include <poll.h>

#include "control/control.h"
#include "control/script.h"

struct remote;

struct remote *remote_new(struct control *ctl, const struct script_host *host);
void remote_free(struct remote *rm);

int remote_pollfds(const struct remote *rm, struct pollfd *pfds, int max);
void remote_event(struct remote *rm, const struct pollfd *pfd);
/* Run what each client's script can run now. */
void remote_step(struct remote *rm);
int remote_timeout_ms(const struct remote *rm);
/* A client's quit waits for its reply (script_quitting): the run must not end before it is sent. */
bool remote_quitting(const struct remote *rm);
/* Where the clients' `status` gets the numbers of the layers above. */
void remote_set_stats(struct remote *rm, status_stats_fn fn, void *ctx);

#endif /* DYNPROF_REMOTE_H */
