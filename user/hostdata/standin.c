// SPDX-License-Identifier: MIT
/* standin.h: the server of a target that serves none. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/thread.h"
#include "dynprof/proto.h"
#include "hostdata/standin.h"
#include "shared/fdio.h"
#include "shared/profhost.h"

struct standin {
	int fd;
	int pid, nspid, chip;
	char net_dev[48];
	char result_dir[PATH_MAX];
	char *params; /* the handshake's JSON */
	struct profhost window;
	bool open;
};

static int reply(const struct standin *st, int32_t type, int32_t code)
{
	struct proto_v2_msg m;

	proto_v2_encode_response(&m, type, code);
	/* The session reads every reply within its timeout; no deadline of our own is needed. */
	return fdio_write_full(st->fd, &m, sizeof(m), INT64_MAX);
}

static int32_t window_start(struct standin *st)
{
	struct profhost_desc d = { .pid = st->nspid, .net_dev = st->net_dev, .chip = st->chip };
	char *sample;
	int rc;

	if (st->open)
		return V2_ALREADY_START;
	sample = profhost_sample_json(st->params);
	d.sample = sample;
	rc = sample ? profhost_open(&st->window, st->result_dir, &d) : -ENOMEM;
	free(sample);
	st->open = rc == 0;
	return rc ? V2_FAIL : V2_SUCCESS;
}

static int32_t window_stop(struct standin *st)
{
	if (!st->open)
		return V2_NOT_START;
	st->open = false;
	return profhost_close(&st->window) ? V2_FAIL : V2_SUCCESS;
}

/* The handshake: the params, acknowledged. 0, or a negative errno (the session went). */
static int handshake(struct standin *st)
{
	struct proto_v2_params p;
	int rc = fdio_read_full(st->fd, &p, sizeof(p), INT64_MAX, NULL);

	if (rc)
		return rc;
	if (p.data_len >= sizeof(p.data))
		return reply(st, V2_PARAMS_RSP, V2_FAIL) ?: -EPROTO;
	st->params = strndup(p.data, p.data_len);
	return reply(st, V2_PARAMS_RSP, st->params ? V2_SUCCESS : V2_FAIL);
}

/* Requests until QUIT or the session's close. */
static void serve(struct standin *st)
{
	struct proto_v2_msg m;

	while (fdio_read_full(st->fd, &m, sizeof(m), INT64_MAX, NULL) == 0) {
		if (m.msg_type == V2_START_REQ && reply(st, V2_START_RSP, window_start(st)))
			break;
		if (m.msg_type == V2_STOP_REQ && reply(st, V2_STOP_RSP, window_stop(st)))
			break;
		if (m.msg_type == V2_QUIT_REQ) {
			int32_t code = st->open ? window_stop(st) : V2_SUCCESS;

			if (reply(st, V2_QUIT_RSP, code == V2_SUCCESS ? V2_SUCCESS : V2_FAIL)) {
				/* the session went: nothing more to tell */
			}
			return;
		}
		if (m.msg_type != V2_START_REQ && m.msg_type != V2_STOP_REQ) {
			if (reply(st, V2_DISCONNECT_RSP, V2_SUCCESS)) {
				/* as CANN's server: an unknown type ends the connection */
			}
			return;
		}
	}
}

static void *standin_main(void *arg)
{
	struct standin *st = arg;

	if (handshake(st) == 0)
		serve(st);
	if (st->open && window_stop(st) != V2_SUCCESS) {
		/* its end_info is missing: the session's look at the folder says so */
	}
	close(st->fd);
	free(st->params);
	free(st);
	return NULL;
}

int standin_start(const struct standin_desc *d)
{
	struct standin *st = calloc(1, sizeof(*st));
	pthread_t th;
	int sv[2], rc;

	if (!st)
		return -ENOMEM;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		rc = -errno;
		free(st);
		return rc;
	}
	st->fd = sv[1];
	st->pid = d->pid;
	st->nspid = d->nspid;
	st->chip = d->chip;
	snprintf(st->net_dev, sizeof(st->net_dev), "/proc/%d/net/dev", d->pid);
	snprintf(st->result_dir, sizeof(st->result_dir), "%s", d->result_dir);
	rc = thread_start(&th, NULL, standin_main, st);
	if (rc) {
		close(sv[0]);
		close(sv[1]);
		free(st);
		return -rc;
	}
	pthread_detach(th);
	return sv[0];
}
