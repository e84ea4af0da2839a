// SPDX-License-Identifier: MIT
/* The netlink process connector (see proc_connector.h). */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>

#include "kernel/proc_connector.h"

/* Messages read per consume call: a fork storm must not starve the caller's loop. */
#define PC_MAX_PER_CALL 4096
/* Receive buffer asked for: ~10000 queued messages (each costs ~768 bytes of skb). */
#define PC_RCVBUF (4 * 1024 * 1024)
/* How long to wait for the kernel's answer to LISTEN (it is sent synchronously
   when it is sent at all, so this only delays the failing case). */
#define PC_ACK_MS 100

struct proc_connector {
	int fd;
	uint32_t nonce; /* in our LISTEN, to know its answer */
	unsigned long long lost;
};

/* One datagram: netlink header, connector header, then our op or its event. */
#define PC_HDR_LEN (NLMSG_HDRLEN + sizeof(struct cn_msg))

static int send_op(int fd, uint32_t nonce, enum proc_cn_mcast_op op)
{
	char buf[NLMSG_SPACE(sizeof(struct cn_msg) + sizeof(uint32_t))] = { 0 };
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	struct nlmsghdr nl = {
		.nlmsg_len = NLMSG_LENGTH(sizeof(struct cn_msg) + sizeof(uint32_t)),
		.nlmsg_type = NLMSG_DONE,
	};
	struct cn_msg cn = {
		.id = { .idx = CN_IDX_PROC, .val = CN_VAL_PROC },
		.ack = nonce,
		.len = sizeof(uint32_t),
	};
	uint32_t v = op;

	/* Built byte by byte: cn_msg ends in a flexible array, so no struct
	   can hold the three parts. */
	memcpy(buf, &nl, sizeof(nl));
	memcpy(buf + NLMSG_HDRLEN, &cn, sizeof(cn));
	memcpy(buf + PC_HDR_LEN, &v, sizeof(v));
	if (sendto(fd, buf, nl.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		return -errno;
	return 0;
}

/*
 * One received datagram's connector message and event: the event copied
 * out (it sits at a 4-byte offset, and carries a u64), zero-filled past
 * what the kernel sent. false when it is not a process event from the kernel.
 */
static bool parse(const char *buf, size_t len, struct cn_msg *cn, struct proc_event *ev)
{
	const struct nlmsghdr *nl = (const struct nlmsghdr *)buf;
	size_t n;

	if (len < PC_HDR_LEN || !NLMSG_OK(nl, len) || nl->nlmsg_type != NLMSG_DONE)
		return false;
	memcpy(cn, buf + NLMSG_HDRLEN, sizeof(*cn));
	if (cn->id.idx != CN_IDX_PROC || cn->id.val != CN_VAL_PROC ||
	    cn->len > nl->nlmsg_len - PC_HDR_LEN || cn->len < offsetof(struct proc_event, event_data))
		return false;
	memset(ev, 0, sizeof(*ev));
	n = cn->len < sizeof(*ev) ? cn->len : sizeof(*ev);
	memcpy(ev, buf + PC_HDR_LEN, n);
	return true;
}

/*
 * Read one datagram. Its length, 0 for one to skip (not from the kernel,
 * cut), or a negative errno (-EAGAIN: none left; -ENOBUFS: the kernel
 * dropped messages).
 */
static ssize_t recv_one(int fd, char *buf, size_t size)
{
	struct sockaddr_nl from;
	struct iovec iov = { .iov_base = buf, .iov_len = size };
	struct msghdr msg = {
		.msg_name = &from, .msg_namelen = sizeof(from), .msg_iov = &iov, .msg_iovlen = 1
	};
	ssize_t n = recvmsg(fd, &msg, MSG_DONTWAIT);

	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	/* Only the kernel (port 0) speaks for the connector. */
	if (msg.msg_namelen != sizeof(from) || from.nl_pid != 0 || (msg.msg_flags & MSG_TRUNC))
		return 0;
	return n;
}

/*
 * The kernel answers LISTEN with a PROC_EVENT_NONE carrying our ack + 1
 * (not our seq: it numbers every message it sends) and an error; from
 * another pid or user namespace it does not answer at all. Events queued
 * before the answer are dropped: the caller scans /proc after opening.
 */
static int wait_ack(struct proc_connector *c)
{
	_Alignas(struct nlmsghdr) char buf[1024];
	struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
	struct proc_event ev;
	struct cn_msg cn;

	for (int reads = 0; reads < PC_MAX_PER_CALL; reads++) {
		ssize_t n = recv_one(c->fd, buf, sizeof(buf));

		if (n == -EAGAIN) {
			int r = poll(&pfd, 1, PC_ACK_MS);

			if (r < 0 && errno != EINTR)
				return -errno;
			if (r == 0)
				return -ETIMEDOUT;
			continue;
		}
		if (n == -ENOBUFS)
			continue;
		if (n < 0)
			return (int)n;
		if (!parse(buf, (size_t)n, &cn, &ev) || ev.what != PROC_EVENT_NONE ||
		    cn.ack != c->nonce + 1)
			continue;
		return ev.event_data.ack.err ? -(int)ev.event_data.ack.err : 0;
	}
	return -ETIMEDOUT;
}

int proc_connector_open(struct proc_connector **out)
{
	struct sockaddr_nl addr = { .nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC };
	struct proc_connector *c;
	int size = PC_RCVBUF, err;

	*out = NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_CONNECTOR);
	if (c->fd < 0) {
		err = -errno;
		free(c);
		return err;
	}
	/* A fork storm outruns a default buffer; FORCE passes rmem_max (we hold
	   CAP_NET_ADMIN if the bind below works at all). Best effort either way. */
	if (setsockopt(c->fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)))
		(void)setsockopt(c->fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	/* Events carry ack 0; other listeners' answers their own nonce. */
	c->nonce = (uint32_t)getpid();
	if (bind(c->fd, (struct sockaddr *)&addr, sizeof(addr))) {
		err = -errno;
		goto fail;
	}
	err = send_op(c->fd, c->nonce, PROC_CN_MCAST_LISTEN);
	if (!err) {
		err = wait_ack(c);
		/* Counted by the kernel even when it reported an error: undone. */
		if (err && err != -ETIMEDOUT)
			(void)send_op(c->fd, c->nonce, PROC_CN_MCAST_IGNORE);
	}
	if (err)
		goto fail;
	*out = c;
	return 0;
fail:
	close(c->fd);
	free(c);
	return err;
}

void proc_connector_close(struct proc_connector *c)
{
	if (!c)
		return;
	/* The kernel counts listeners globally: without IGNORE it keeps
	   building events for every fork on the host after we are gone. */
	(void)send_op(c->fd, c->nonce, PROC_CN_MCAST_IGNORE);
	close(c->fd);
	free(c);
}

int proc_connector_fd(const struct proc_connector *c)
{
	return c->fd;
}

unsigned long long proc_connector_lost(const struct proc_connector *c)
{
	return c->lost;
}

/* A process event as a dp_event; false for what the model does not need. */
static bool to_event(const struct proc_event *ev, struct dp_event *e)
{
	memset(e, 0, sizeof(*e));
	switch (ev->what) {
	case PROC_EVENT_FORK:
		/* A new thread is no new process. */
		if (ev->event_data.fork.child_pid != ev->event_data.fork.child_tgid)
			return false;
		e->type = DP_EVENT_FORK;
		e->pid = (uint32_t)ev->event_data.fork.child_tgid;
		e->ppid = (uint32_t)ev->event_data.fork.parent_tgid;
		e->tid = (uint32_t)ev->event_data.fork.parent_pid;
		return true;
	case PROC_EVENT_EXEC:
		e->type = DP_EVENT_EXEC;
		e->pid = (uint32_t)ev->event_data.exec.process_tgid;
		e->tid = (uint32_t)ev->event_data.exec.process_pid;
		return true;
	case PROC_EVENT_EXIT:
		/* Only the leader's exit stands for the process (see caveats in
		   tracker.c: it may come before the other threads end). */
		if (ev->event_data.exit.process_pid != ev->event_data.exit.process_tgid)
			return false;
		e->type = DP_EVENT_EXIT;
		e->pid = (uint32_t)ev->event_data.exit.process_tgid;
		e->tid = (uint32_t)ev->event_data.exit.process_pid;
		e->exit_code = (int32_t)ev->event_data.exit.exit_code;
		return true;
	default:
		return false;
	}
}

/* Bytes the event's type needs after the header (shorter ones are skipped). */
static size_t needed(const struct proc_event *ev)
{
	size_t head = offsetof(struct proc_event, event_data);

	switch (ev->what) {
	case PROC_EVENT_FORK:
		return head + sizeof(ev->event_data.fork);
	case PROC_EVENT_EXEC:
		return head + sizeof(ev->event_data.exec);
	case PROC_EVENT_EXIT:
		/* Up to exit_signal: parent_pid/tgid came later (4.x). */
		return head + offsetof(struct exit_proc_event, parent_pid);
	default:
		return head;
	}
}

int proc_connector_consume(struct proc_connector *c,
			   void (*on_event)(void *ctx, const struct dp_event *e), void *ctx)
{
	_Alignas(struct nlmsghdr) char buf[1024];
	struct proc_event ev;
	struct dp_event e;
	struct cn_msg cn;
	int delivered = 0;

	for (int reads = 0; reads < PC_MAX_PER_CALL; reads++) {
		ssize_t n = recv_one(c->fd, buf, sizeof(buf));

		if (n == -EAGAIN)
			break;
		if (n == -ENOBUFS) {
			/* Messages dropped; the queue goes on with later ones. */
			c->lost++;
			continue;
		}
		if (n < 0)
			return delivered ? delivered : (int)n;
		if (!parse(buf, (size_t)n, &cn, &ev) || cn.len < needed(&ev) || !to_event(&ev, &e))
			continue;
		on_event(ctx, &e);
		delivered++;
	}
	return delivered;
}

const char *proc_connector_strerror(int err)
{
	switch (err) {
	case -EPERM:
	case -EACCES:
		return "needs CAP_NET_ADMIN";
	case -EPROTONOSUPPORT:
		return "not in this kernel or network namespace";
	case -ETIMEDOUT:
		return "no answer from the kernel (pid or user namespace not the host's)";
	case -ENOMEM:
		return "out of memory";
	default:
		return strerror(-err);
	}
}
