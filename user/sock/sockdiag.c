// SPDX-License-Identifier: MIT
/* AF_UNIX sockets through sock_diag (see sockdiag.h). */
#include <assert.h>
#include <errno.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "ns/netns_socket.h"
#include "sock/sockdiag.h"
#include "shared/array_size.h"
#include "shared/clock.h"

#define QUERY_WAIT_MS 1000
#define CACHE_SLOTS 8
#define CACHE_IDLE_MS 30000 /* a namespace not asked about for this long is let go */
#define RECV_BUF 32768

bool sockdiag_same_dev(uint32_t vfs_dev, dev_t st_dev)
{
	return (vfs_dev >> 20) == major(st_dev) && (vfs_dev & 0xfffffU) == minor(st_dev);
}

size_t sockdiag_build(void *buf, uint32_t ino, uint32_t states, uint32_t show, uint32_t seq)
{
	struct {
		struct nlmsghdr nh;
		struct unix_diag_req req;
	} m;

	static_assert(sizeof(m) == SOCKDIAG_REQ_LEN, "request size");
	memset(&m, 0, sizeof(m));
	m.nh.nlmsg_len = sizeof(m);
	m.nh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	m.nh.nlmsg_flags = (uint16_t)(NLM_F_REQUEST | (ino ? 0 : NLM_F_DUMP));
	m.nh.nlmsg_seq = seq;
	m.req.sdiag_family = AF_UNIX;
	m.req.udiag_states = ino ? ~0U : states;
	m.req.udiag_ino = ino;
	m.req.udiag_show = show;
	/* An exact query must name the cookie, or say it has none. */
	m.req.udiag_cookie[0] = m.req.udiag_cookie[1] = ~0U;
	memcpy(buf, &m, sizeof(m));
	return sizeof(m);
}

/* The attributes after a unix_diag_msg; unknown ones skipped, bad lengths refused. */
static int parse_attrs(const unsigned char *p, size_t len, struct sockdiag_rec *r)
{
	while (len >= sizeof(struct nlattr)) {
		struct nlattr a;
		size_t alen, step;

		memcpy(&a, p, sizeof(a));
		alen = a.nla_len;
		if (alen < sizeof(a) || alen > len)
			return -EBADMSG;
		const unsigned char *v = p + NLA_HDRLEN;
		size_t vlen = alen - NLA_HDRLEN;

		switch (a.nla_type & NLA_TYPE_MASK) {
		case UNIX_DIAG_VFS: {
			struct unix_diag_vfs vfs;

			if (vlen < sizeof(vfs))
				return -EBADMSG;
			memcpy(&vfs, v, sizeof(vfs));
			r->vfs_ino = vfs.udiag_vfs_ino;
			r->vfs_dev = vfs.udiag_vfs_dev;
			r->has_vfs = true;
			break;
		}
		case UNIX_DIAG_PEER:
			if (vlen < sizeof(uint32_t))
				return -EBADMSG;
			memcpy(&r->peer, v, sizeof(uint32_t));
			r->has_peer = true;
			break;
		case UNIX_DIAG_SHUTDOWN:
			if (vlen < 1)
				return -EBADMSG;
			r->shutdown = v[0];
			r->has_shutdown = true;
			break;
		default:
			break;
		}
		step = NLA_ALIGN(alen);
		if (step >= len)
			break;
		p += step;
		len -= step;
	}
	return 0;
}

static int parse_one(const struct nlmsghdr *nh, const unsigned char *body, size_t blen,
		     sockdiag_fn fn, void *ctx)
{
	struct unix_diag_msg m;
	struct sockdiag_rec r = { 0 };
	int err;

	(void)nh;
	if (blen < sizeof(m))
		return -EBADMSG;
	memcpy(&m, body, sizeof(m));
	if (m.udiag_family != AF_UNIX)
		return 0;
	r.ino = m.udiag_ino;
	r.type = m.udiag_type;
	r.state = m.udiag_state;
	err = parse_attrs(body + NLMSG_ALIGN(sizeof(m)),
			  blen > NLMSG_ALIGN(sizeof(m)) ? blen - NLMSG_ALIGN(sizeof(m)) : 0, &r);
	if (err)
		return err;
	fn(ctx, &r);
	return 0;
}

int sockdiag_parse(const void *buf, size_t len, uint32_t seq, bool exact, sockdiag_fn fn, void *ctx)
{
	const unsigned char *p = buf;

	while (len >= sizeof(struct nlmsghdr)) {
		struct nlmsghdr nh;
		size_t step;
		int err;

		memcpy(&nh, p, sizeof(nh));
		if (nh.nlmsg_len < sizeof(nh) || nh.nlmsg_len > len)
			return -EBADMSG;
		if (nh.nlmsg_seq == seq) {
			const unsigned char *body = p + NLMSG_HDRLEN;
			size_t blen = nh.nlmsg_len - NLMSG_HDRLEN;

			if (nh.nlmsg_type == NLMSG_DONE)
				return 1;
			if (nh.nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr e;

				if (blen < sizeof(e.error))
					return -EBADMSG;
				memcpy(&e.error, body, sizeof(e.error));
				if (e.error == 0)
					return 1; /* an ack */
				return e.error < 0 && e.error > -4096 ? e.error : -EBADMSG;
			}
			if (nh.nlmsg_type == SOCK_DIAG_BY_FAMILY) {
				err = parse_one(&nh, body, blen, fn, ctx);
				if (err)
					return err;
				if (exact)
					return 1;
			}
		}
		step = NLMSG_ALIGN(nh.nlmsg_len);
		if (step >= len)
			break;
		p += step;
		len -= step;
	}
	return 0;
}

int sockdiag_query(int nlfd, uint32_t ino, uint32_t states, uint32_t show, sockdiag_fn fn, void *ctx)
{
	static uint32_t next_seq;
	unsigned char req[SOCKDIAG_REQ_LEN];
	static _Thread_local unsigned char buf[RECV_BUF];
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	uint32_t seq = __atomic_add_fetch(&next_seq, 1, __ATOMIC_RELAXED);
	int64_t deadline = clock_ms() + QUERY_WAIT_MS;
	size_t rlen = sockdiag_build(req, ino, states, show, seq);

	if (sendto(nlfd, req, rlen, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		return -errno;
	for (;;) {
		struct pollfd pfd = { .fd = nlfd, .events = POLLIN };
		ssize_t n;
		int rc;

		rc = poll(&pfd, 1, clock_ms_left(deadline));
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc <= 0)
			return rc == 0 ? -ETIMEDOUT : -errno;
		n = recv(nlfd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return -errno;
		rc = sockdiag_parse(buf, (size_t)n, seq, ino != 0, fn, ctx);
		/* The family has no handler: unix_diag is not there. */
		if (rc == -ENOENT && !ino)
			return -EOPNOTSUPP;
		if (rc)
			return rc < 0 ? rc : 0;
	}
}

/* ---- sockets per network namespace ------------------------------------------ */

static struct {
	pthread_mutex_t lock;
	struct slot {
		int fd;
		dev_t dev;
		ino_t ino;
		int64_t used_ms;
	} slots[CACHE_SLOTS];
} cache = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void slot_free(struct slot *s)
{
	if (s->used_ms && s->fd >= 0)
		close(s->fd);
	*s = (struct slot){ .fd = -1 };
}

/* The slot of (dev, ino), or the one to reuse (empty, else least recent). */
static struct slot *slot_find(dev_t dev, ino_t ino, bool *hit)
{
	struct slot *victim = &cache.slots[0];
	int64_t now = clock_ms();

	*hit = false;
	for (size_t i = 0; i < ARRAY_SIZE(cache.slots); i++) {
		struct slot *s = &cache.slots[i];

		if (s->used_ms && s->dev == dev && s->ino == ino) {
			*hit = true;
			return s;
		}
		/* The fd pins its namespace: let go of the ones nobody asks about. */
		if (s->used_ms && now - s->used_ms > CACHE_IDLE_MS)
			slot_free(s);
		if (!s->used_ms || (victim->used_ms && s->used_ms < victim->used_ms))
			victim = s;
	}
	return victim;
}

int sockdiag_socket_for(int pid)
{
	struct netns ns;
	struct slot *s;
	bool hit;
	int fd = netns_open(pid, &ns);

	if (fd < 0)
		return fd;
	pthread_mutex_lock(&cache.lock);
	s = slot_find(ns.dev, ns.ino, &hit);
	if (!hit) {
		fd = netns_socket(&ns, AF_NETLINK, SOCK_DGRAM, NETLINK_SOCK_DIAG);
		if (fd >= 0) {
			slot_free(s);
			*s = (struct slot){ .fd = fd, .dev = ns.dev, .ino = ns.ino };
		}
	}
	if (hit || fd >= 0) {
		s->used_ms = clock_ms() ? clock_ms() : 1;
		fd = s->fd;
	}
	pthread_mutex_unlock(&cache.lock);
	netns_close(&ns);
	return fd;
}

void sockdiag_socket_drop(int fd)
{
	pthread_mutex_lock(&cache.lock);
	for (size_t i = 0; i < ARRAY_SIZE(cache.slots); i++)
		if (cache.slots[i].used_ms && cache.slots[i].fd == fd)
			slot_free(&cache.slots[i]);
	pthread_mutex_unlock(&cache.lock);
}
