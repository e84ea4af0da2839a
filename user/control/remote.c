// SPDX-License-Identifier: MIT
/* --control clients and their scripts (see remote.h). */
#include <stdlib.h>

#include "control/remote.h"

#define REMOTE_MAX_CLIENTS 32

struct client {
	int id; /* control's client id */
	bool used;
	struct script *script;
	struct remote *rm;
};

struct remote {
	struct control *ctl;
	struct script_host host;
	struct client clients[REMOTE_MAX_CLIENTS];
};

/* `events`: the client's connection becomes a stream (control_stream). */
static int stream(void *ctx, char *err, size_t errlen)
{
	struct client *c = ctx;

	return control_stream(c->rm->ctl, c->id, err, errlen);
}

struct remote *remote_new(struct control *ctl, const struct script_host *host)
{
	struct remote *rm = calloc(1, sizeof(*rm));

	if (!rm)
		return NULL;
	rm->ctl = ctl;
	rm->host = *host;
	rm->host.stream = stream;
	return rm;
}

void remote_free(struct remote *rm)
{
	if (!rm)
		return;
	for (int i = 0; i < REMOTE_MAX_CLIENTS; i++)
		script_free(rm->clients[i].script);
	free(rm);
}

int remote_pollfds(const struct remote *rm, struct pollfd *pfds, int max)
{
	return control_pollfds(rm->ctl, pfds, max);
}

static void reply(void *ctx, const char *text)
{
	struct client *c = ctx;

	control_reply(c->rm->ctl, c->id, text);
}

/* The client's slot, made on its first line; the oldest idle slot is reused. */
static struct client *client_for(struct remote *rm, int id)
{
	struct client *free_slot = NULL;

	for (int i = 0; i < REMOTE_MAX_CLIENTS; i++) {
		struct client *c = &rm->clients[i];

		if (c->used && c->id == id)
			return c;
		if (!free_slot && (!c->used || script_idle(c->script)))
			free_slot = c;
	}
	if (!free_slot)
		return NULL;
	script_free(free_slot->script);
	*free_slot = (struct client){ .id = id, .used = true, .rm = rm };
	free_slot->script = script_new(&rm->host, reply, free_slot);
	if (!free_slot->script) {
		free_slot->used = false;
		return NULL;
	}
	return free_slot;
}

static void on_line(void *ctx, int id, const char *line)
{
	struct remote *rm = ctx;
	struct client *c = client_for(rm, id);

	if (!c) {
		control_reply(rm->ctl, id, "error: too busy: too many clients with commands in progress");
		return;
	}
	script_push_line(c->script, line);
	script_step(c->script);
}

void remote_event(struct remote *rm, const struct pollfd *pfd)
{
	control_event(rm->ctl, pfd, on_line, rm);
}

void remote_step(struct remote *rm)
{
	for (int i = 0; i < REMOTE_MAX_CLIENTS; i++)
		if (rm->clients[i].used)
			script_step(rm->clients[i].script);
}

int remote_timeout_ms(const struct remote *rm)
{
	int best = -1;

	for (int i = 0; i < REMOTE_MAX_CLIENTS; i++) {
		int t = rm->clients[i].used ? script_timeout_ms(rm->clients[i].script) : -1;

		if (t >= 0 && (best < 0 || t < best))
			best = t;
	}
	return best;
}

bool remote_quitting(const struct remote *rm)
{
	for (int i = 0; i < REMOTE_MAX_CLIENTS; i++)
		if (rm->clients[i].used && script_quitting(rm->clients[i].script))
			return true;
	return false;
}

void remote_set_stats(struct remote *rm, status_stats_fn fn, void *ctx)
{
	rm->host.stats = fn;
	rm->host.stats_ctx = ctx;
	for (int i = 0; i < REMOTE_MAX_CLIENTS; i++)
		if (rm->clients[i].used)
			script_set_stats(rm->clients[i].script, fn, ctx);
}
