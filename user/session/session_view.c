// SPDX-License-Identifier: MIT
/* The session seen from the layers above, read only (see session_view.h). */
#include "session/session_impl.h"
#include "session/session_view.h"

void session_info(const struct session *s, struct session_info *out)
{
	*out = (struct session_info){
		.output = s->output,
		.window_open = s->window_open,
		.windows = s->windows,
		.saved = s->saved,
		.incomplete = s->incomplete,
		.lost = s->lost,
	};
}

const char *session_output(const struct session *s)
{
	return s->output;
}

bool session_window_open(const struct session *s)
{
	return s->window_open;
}

bool session_is_launch(const struct session *s)
{
	return s->launch;
}

bool session_is_follow(const struct session *s)
{
	return s->follow;
}

unsigned session_shape(const struct session *s)
{
	return s->shape + target_changes();
}

bool session_shape_moved(const struct session *s, struct session_mark *m)
{
	unsigned now = session_shape(s);

	if (m->seen && m->shape == now)
		return false;
	m->shape = now;
	m->seen = true;
	return true;
}

/* Counted again only when the shape moved (a cache: s is not changed otherwise). */
int session_live(const struct session *s)
{
	struct session *w = (struct session *)s;
	int n = 0;

	if (!session_shape_moved(s, &w->live_mark))
		return s->live;
	for (int i = 0; i < s->ntargets; i++)
		n += !s->targets[i]->dropped && !s->targets[i]->handshaking && !s->targets[i]->departing;
	w->live = n;
	return n;
}

int session_target_count(const struct session *s)
{
	return s->ntargets;
}

const struct session_target_info *session_target_info(const struct session *s, int index,
						      struct session_target_info *out)
{
	const struct target *t = s->targets[index];

	*out = (struct session_target_info){
		.pid = t->pid,
		.nspid = t->nspid,
		.container = t->container,
		.container_id = t->container_id,
		.container_name = t->container_name,
		.uid = t->uid,
		.user_names = t->sock.user_names,
		.uid_known = t->uid_known,
		.cards = t->cards,
		.command = t->command,
		.windows = t->windows,
		.host_only = t->standin,
	};
	return out;
}

unsigned session_target_serial(const struct session *s, int index)
{
	return s->targets[index]->serial;
}

int session_target_pid(const struct session *s, int index)
{
	return s->targets[index]->pid;
}

bool session_target_live(const struct session *s, int index)
{
	return !s->targets[index]->dropped && !s->targets[index]->handshaking &&
	       !s->targets[index]->departing;
}

bool session_target_joining(const struct session *s, int index)
{
	return s->targets[index]->handshaking;
}

bool session_target_collecting(const struct session *s, int index)
{
	return s->targets[index]->collecting;
}

int session_target_requests(const struct session *s, int index)
{
	return s->targets[index]->count.commands;
}

int session_target_last_status(const struct session *s, int index)
{
	return s->targets[index]->last_status;
}

unsigned session_command_serial(const struct session *s)
{
	return s->command_serial;
}

bool session_target_in_last_command(const struct session *s, int index)
{
	return s->command_serial && s->targets[index]->last_command == s->command_serial;
}

int64_t session_target_last_reply_us(const struct session *s, int index)
{
	return s->targets[index]->last_reply_us;
}

const struct window_account *session_target_last_window(const struct session *s, int index)
{
	return &s->targets[index]->last_window;
}
