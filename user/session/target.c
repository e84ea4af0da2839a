// SPDX-License-Identifier: MIT
/* One target's conversation, either wire generation (see target_impl.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "common/offloop.h"
#include "shared/clock.h"
#include "shared/fdio.h"
#include "hostdata/hostdata.h"
#include "results/output.h"
#include "session/target_impl.h"
#include "session/watchdog.h"

#define DRAIN_MS 200 /* how long to wait for the QUIT_RSP after a DISCONNECT */

static size_t reply_size(const struct target *t)
{
	return t->proto == PROTO_V1 ? sizeof(struct proto_v1_response) : sizeof(struct proto_v2_msg);
}

void target_prepare_handshake(struct target *t, int64_t deadline)
{
	if (t->proto == PROTO_V1) {
		struct proto_v1_request req;

		proto_v1_encode_request(&req, V1_TEST_REQ, NULL);
		exchange_init(&t->xchg, t->fd, &req, sizeof(req), reply_size(t), deadline);
	} else {
		struct proto_v2_params p;

		/* params_build() guarantees the JSON fits. */
		proto_v2_encode_params(&p, t->params);
		exchange_init(&t->xchg, t->fd, &p, sizeof(p), reply_size(t), deadline);
	}
}

void target_prepare_command(struct target *t, enum proto_command cmd, int64_t deadline)
{
	server_count_command(&t->count, &t->limits, clock_ms(), cmd == PROTO_CMD_START);
	/* From the moment it is sent: dynprof may not live to read the reply that opens it. */
	if (cmd == PROTO_CMD_START)
		watchdog_window(t->fd, true);
	if (t->proto == PROTO_V1) {
		struct proto_v1_request req;

		proto_v1_encode_request(&req, proto_v1_request_type(cmd),
					cmd == PROTO_CMD_START ? t->params : NULL);
		exchange_init(&t->xchg, t->fd, &req, sizeof(req), reply_size(t), deadline);
	} else {
		struct proto_v2_msg msg;

		proto_v2_encode_request(&msg, cmd);
		exchange_init(&t->xchg, t->fd, &msg, sizeof(msg), reply_size(t), deadline);
	}
}

/* Explain an exchange that did not bring a whole reply. */
static void transport_reason(const struct target *t, int timeout_ms, char *buf, size_t len)
{
	const struct exchange *x = &t->xchg;

	switch (x->result) {
	case -ETIMEDOUT:
		if (timeout_ms % 1000)
			snprintf(buf, len, "no reply within %d ms", timeout_ms);
		else
			snprintf(buf, len, "no reply within %d s", timeout_ms / 1000);
		break;
	case -ECONNRESET:
	case -EPIPE:
		snprintf(buf, len, "the server closed the connection");
		break;
	case -EPROTO:
		snprintf(buf, len, "short reply (%zu of %zu bytes), then the server closed the connection",
			 x->in_done, x->in_len);
		break;
	default:
		snprintf(buf, len, "connection error: %s", strerror(-x->result));
	}
}

static void bad_reply_reason(const struct target *t, char *buf, size_t len)
{
	int32_t type, code;

	memcpy(&type, t->xchg.in, sizeof(type));
	memcpy(&code, t->xchg.in + sizeof(type), sizeof(code));
	snprintf(buf, len, "unexpected reply (type %d, code %d)", type, code);
}

/* Decode the reply in t->xchg; `handshake` selects the first-exchange decoder. */
static void decode(struct target *t, bool handshake, enum proto_command cmd, int timeout_ms,
		   struct target_outcome *out)
{
	out->reason[0] = '\0';
	out->reply.detail[0] = '\0';
	if (t->xchg.result) {
		out->reply.status = PROTO_BAD_REPLY;
		transport_reason(t, timeout_ms, out->reason, sizeof(out->reason));
		return;
	}
	if (t->proto == PROTO_V1) {
		const struct proto_v1_response *r = (const void *)t->xchg.in;

		if (handshake)
			proto_v1_decode_test_ack(r, &out->reply);
		else
			proto_v1_decode_reply(r, cmd, &out->reply);
	} else {
		const struct proto_v2_msg *m = (const void *)t->xchg.in;

		if (handshake)
			proto_v2_decode_params_ack(m, &out->reply);
		else
			proto_v2_decode_reply(m, cmd, &out->reply);
	}
	if (out->reply.status == PROTO_BAD_REPLY)
		bad_reply_reason(t, out->reason, sizeof(out->reason));
}

void target_finish_handshake(struct target *t, struct target_outcome *out)
{
	decode(t, true, PROTO_CMD_START, 0, out);
	/* Usable from now on: if dynprof dies, the watchdog stops and quits it. */
	if (out->reply.status == PROTO_OK)
		watchdog_hold(t->fd, t->pid, t->proto);
}

void target_finish_command(struct target *t, enum proto_command cmd, int timeout_ms,
			   struct target_outcome *out)
{
	decode(t, false, cmd, timeout_ms, out);
	/* A START that opened nothing (a window already open is ours to stop too). */
	if (cmd == PROTO_CMD_START && !t->collecting && out->reply.status != PROTO_OK &&
	    out->reply.status != PROTO_ALREADY_STARTED)
		watchdog_window(t->fd, false);
}

void target_read_unsolicited(struct target *t, struct target_outcome *out)
{
	struct exchange *x = &t->xchg;

	exchange_init(x, t->fd, "", 0, reply_size(t), clock_ms() + DRAIN_MS);
	x->result = fdio_read_full(t->fd, x->in, x->in_len, x->deadline, &x->in_done);
	/* Whatever arrives unasked must be a DISCONNECT; QUIT decoding accepts only that. */
	decode(t, false, PROTO_CMD_QUIT, DRAIN_MS, out);
	if (out->reply.status != PROTO_DISCONNECTED && x->result == 0) {
		out->reply.status = PROTO_BAD_REPLY;
		bad_reply_reason(t, out->reason, sizeof(out->reason));
	} else if (x->result == -ECONNRESET) {
		snprintf(out->reason, sizeof(out->reason), "the server closed the connection");
	}
}

void target_drain(struct target *t, int count)
{
	unsigned char buf[PROTO_MAX_WIRE_SIZE];
	int64_t deadline = clock_ms() + DRAIN_MS;

	for (int i = 0; i < count && t->fd >= 0; i++)
		if (fdio_read_full(t->fd, buf, reply_size(t), deadline, NULL))
			return; /* nothing more, or late: the connection is closed next either way */
}

int target_prof_names(const struct target *t)
{
	/* v1 names carry no pid: its folders are those that appear during its window. */
	return t->proto == PROTO_V1 ? OUTPUT_V1_NAMES : t->nspid;
}

void target_set_collecting(struct target *t, bool collecting)
{
	server_count_collecting(&t->count, clock_ms(), collecting);
	if (t->fd >= 0 && collecting != t->collecting)
		watchdog_window(t->fd, collecting);
	t->collecting = collecting;
}

/* Out of the session's idle set before its fd is closed (a copy held elsewhere would keep it in). */
void target_unwatch_idle(struct target *t)
{
	if (t->ep_fd >= 0)
		(void)epoll_ctl(t->ep, EPOLL_CTL_DEL, t->ep_fd, NULL);
	t->ep_fd = -1;
}

void target_connected(struct target *t)
{
	server_count_connected(&t->count, clock_ms());
	t->collecting = false;
}

/*
 * Every drop and close, process-wide (session_shape): the passes over the
 * table that look for them run only when it moved. Atomic: a join's
 * target is prepared, and may be dropped, on a worker thread.
 */
static unsigned changes;

unsigned target_changes(void)
{
	return __atomic_load_n(&changes, __ATOMIC_RELAXED);
}

static void changed(void)
{
	__atomic_add_fetch(&changes, 1, __ATOMIC_RELAXED);
}

void target_close(struct target *t)
{
	changed();
	target_unwatch_idle(t);
	if (t->fd >= 0) {
		watchdog_release(t->fd);
		close(t->fd);
	}
	t->fd = -1;
}

void target_drop(struct target *t)
{
	/* A command under way beside the loop must never step a closed (or reused) fd. */
	if (t->in_flight || t->handshaking)
		exchange_abandon(&t->xchg, -ECONNRESET);
	target_close(t);
	if (t->departing && t->depart_pidfd >= 0) { /* its count is the session's (session_depart_step) */
		close(t->depart_pidfd);
		t->depart_pidfd = -1;
	}
	if (t->joined && !t->dropped)
		hostdata_target_leave(t->pid);
	if (!t->dropped)
		changed();
	t->dropped = true;
	target_set_collecting(t, false);
}

/*
 * The result folder dynprof made inside the target's filesystem
 * (<home>/.dynprof/<dynprof pid>), and .dynprof above it, removed when
 * empty: every window's folder was moved out, or none was written (a
 * refused attach). Through the folder's own fd: ".." is its real parent
 * whatever was renamed since, and AT_REMOVEDIR removes nothing that is not
 * an empty folder.
 */
static void remove_empty_result_dir(int fd)
{
	char name[32];
	int parent = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC), grand;

	if (parent < 0)
		return;
	snprintf(name, sizeof(name), "%d", (int)getpid());
	if (unlinkat(parent, name, AT_REMOVEDIR) == 0 &&
	    (grand = openat(parent, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		unlinkat(grand, ".dynprof", AT_REMOVEDIR); /* others' runs may still have theirs */
		close(grand);
	}
	close(parent);
}

/* Its result folder in its own filesystem removed when empty, its helper stopped. */
static void let_go_files(struct fshelper *fsh, int result_fd)
{
	if (fsh && fshelper_drop_result_dir(fsh)) {
		/* Not empty, or gone: left as it is. */
	}
	fshelper_stop(fsh);
	if (result_fd >= 0) {
		remove_empty_result_dir(result_fd);
		close(result_fd);
	}
}

void target_free(struct target *t)
{
	target_drop(t);
	free(t->params);
	free(t->prof_seen);
	free(t->inherited);
	t->inherited = NULL;
	let_go_files(t->fsh, t->result_fd);
	t->fsh = NULL;
	t->result_fd = -1;
	t->params = NULL;
	t->prof_seen = NULL;
}

struct files_job {
	struct offloop_job job;
	struct fshelper *fsh;
	int result_fd;
};

static void files_work(struct offloop_job *job)
{
	struct files_job *j = (struct files_job *)job;

	let_go_files(j->fsh, j->result_fd);
}

static void files_done(struct offloop_job *job)
{
	free(job);
}

void target_free_beside(struct target *t, struct offloop *q)
{
	struct files_job *j = t->fsh || t->result_fd >= 0 ? malloc(sizeof(*j)) : NULL;

	if (j) {
		*j = (struct files_job){ .job = { .work = files_work, .done = files_done },
					 .fsh = t->fsh,
					 .result_fd = t->result_fd };
		if (offloop_start(q, &j->job) == 0) {
			t->fsh = NULL;
			t->result_fd = -1;
		} else {
			free(j); /* no thread: let go of here */
		}
	}
	target_free(t);
}
