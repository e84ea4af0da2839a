// SPDX-License-Identifier: MIT
/* AF_UNIX sockets through sock_diag (see sockdiag.h). */
#include <assert.h>
#include <errno.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "ns/netns_socket.h"
#include "sock/sockdiag.h"
#include "sock/sockheld.h"
#include "shared/array_size.h"
#include "shared/clock.h"

#define QUERY_WAIT_MS 1000
#define CACHE_SLOTS 8
#define CACHE_IDLE_MS 30000 /* a namespace not asked about for this long is let go */
#define RECV_BUF 32768
#define LISTENERS_KEEP_MS 1000 /* a dump of a namespace's listeners is used this long */
#define LISTENERS_MAX 65536    /* listeners kept per namespace at most */
#define EXACT_ASKS_MAX 8       /* sockets asked about one by one at most, past that a dump */

bool sockdiag_same_dev(uint32_t vfs_dev, dev_t st_dev)
{
	return (vfs_dev >> 20) == major(st_dev) && (vfs_dev & 0xfffffU) == minor(st_dev);
}

int sockdiag_name_text(const struct sockdiag_rec *r, char *out, size_t outlen)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };

	if (!r->has_name)
		return -ENOENT;
	memcpy(a.sun_path, r->name, r->name_len);
	return sockheld_addr_text(&a, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + r->name_len),
				  out, outlen);
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
		case UNIX_DIAG_NAME:
			/* Never more than sun_path holds: a longer one is not an address. */
			if (vlen > SOCKDIAG_NAME_MAX)
				return -EBADMSG;
			memcpy(r->name, v, vlen);
			r->name_len = (uint8_t)vlen;
			r->has_name = true;
			break;
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
	if (fn) /* a dump asked only to tell whether unix_diag answers */
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

/*
 * One query at a time, whatever the thread: the loop and the joins beside
 * it (session_join.c) ask through the same cached socket of a namespace,
 * and a reply read by the other thread was skipped there (another seq) and
 * never came here: the asker waited out QUERY_WAIT_MS, 1 s of the loop, and
 * a join failed (measured: 1.0-1.5 s stalls with 1000 targets served). A
 * query is a kernel round trip, never a wait on a target.
 */
static pthread_mutex_t query_lock = PTHREAD_MUTEX_INITIALIZER;

static int query_locked(int nlfd, uint32_t ino, uint32_t states, uint32_t show, sockdiag_fn fn,
			void *ctx);

int sockdiag_query(int nlfd, uint32_t ino, uint32_t states, uint32_t show, sockdiag_fn fn, void *ctx)
{
	int rc;

	pthread_mutex_lock(&query_lock);
	rc = query_locked(nlfd, ino, states, show, fn, ctx);
	pthread_mutex_unlock(&query_lock);
	return rc;
}

static int query_locked(int nlfd, uint32_t ino, uint32_t states, uint32_t show, sockdiag_fn fn, void *ctx)
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

struct one_rec {
	uint32_t want;
	struct sockdiag_rec *rec;
	bool found;
};

static void take_one(void *ctx, const struct sockdiag_rec *r)
{
	struct one_rec *o = ctx;

	if (r->ino == o->want) {
		*o->rec = *r;
		o->found = true;
	}
}

int sockdiag_query_one(int nlfd, uint32_t ino, uint32_t show, struct sockdiag_rec *rec)
{
	struct one_rec o = { .want = ino, .rec = rec };
	int err = sockdiag_query(nlfd, ino, 0, show, take_one, &o);

	return err ? err : o.found ? 0 : -ENOENT;
}

/* ---- sockets per network namespace ------------------------------------------ */

/* The listeners of one namespace, sorted by inode (one dump's). */
struct listeners {
	struct sockdiag_rec *rec;
	int n, cap;
	bool too_many;
	int64_t taken_ms; /* 0: none kept */
};

static struct {
	pthread_mutex_t lock;
	struct slot {
		int fd;
		dev_t dev;
		ino_t ino;
		int64_t used_ms;
		struct listeners kept; /* the namespace's listeners at kept.taken_ms */
	} slots[CACHE_SLOTS];
} cache = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void slot_free(struct slot *s)
{
	if (s->used_ms && s->fd >= 0)
		close(s->fd);
	free(s->kept.rec);
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

/* The cached socket of the netns of `pid`, and which namespace it is. */
static int socket_for(int pid, dev_t *dev, ino_t *ino)
{
	struct netns ns;
	struct slot *s;
	bool hit;
	int fd = netns_open(pid, &ns);

	if (fd < 0)
		return fd;
	*dev = ns.dev;
	*ino = ns.ino;
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

int sockdiag_socket_for(int pid)
{
	dev_t dev;
	ino_t ino;

	return socket_for(pid, &dev, &ino);
}

void sockdiag_socket_drop(int fd)
{
	pthread_mutex_lock(&cache.lock);
	for (size_t i = 0; i < ARRAY_SIZE(cache.slots); i++)
		if (cache.slots[i].used_ms && cache.slots[i].fd == fd)
			slot_free(&cache.slots[i]);
	pthread_mutex_unlock(&cache.lock);
}

/* ---- a namespace's listeners, kept a moment ---------------------------------- */

static void add_listener(void *ctx, const struct sockdiag_rec *r)
{
	struct listeners *l = ctx;

	if (l->too_many || r->state != SOCKDIAG_LISTEN)
		return;
	if (l->n == l->cap) {
		int cap = l->cap ? l->cap * 2 : 256;
		void *grown = cap <= LISTENERS_MAX ? realloc(l->rec, (size_t)cap * sizeof(*l->rec)) :
						     NULL;

		if (!grown) {
			l->too_many = true;
			return;
		}
		l->rec = grown;
		l->cap = cap;
	}
	l->rec[l->n++] = *r;
}

static int by_ino(const void *a, const void *b)
{
	uint32_t x = ((const struct sockdiag_rec *)a)->ino, y = ((const struct sockdiag_rec *)b)->ino;

	return x < y ? -1 : x > y;
}

/* Whether r is bound to `path`. */
static bool named(const struct sockdiag_rec *r, const char *path)
{
	char text[SOCKDIAG_NAME_MAX + 2];

	return !sockdiag_name_text(r, text, sizeof(text)) && !strcmp(text, path);
}

/* The first of `inos` that listens on `path` in `l`: 1 and *rec, else 0. */
static int search(const struct listeners *l, const uint32_t *inos, int n, const char *path,
		  struct sockdiag_rec *rec)
{
	for (int i = 0; i < n && l->n; i++) {
		struct sockdiag_rec key = { .ino = inos[i] };
		const struct sockdiag_rec *r = bsearch(&key, l->rec, (size_t)l->n, sizeof(key), by_ino);

		if (r && named(r, path)) {
			*rec = *r;
			return 1;
		}
	}
	return 0;
}

/* In the kept dump of (dev, ino), if young enough: 1 found, 0 not, -ESTALE too old, -ENOENT none kept. */
static int search_kept(dev_t dev, ino_t ino, const uint32_t *inos, int n, const char *path,
		       struct sockdiag_rec *rec)
{
	int rc = -ENOENT;

	pthread_mutex_lock(&cache.lock);
	for (size_t i = 0; i < ARRAY_SIZE(cache.slots); i++) {
		struct slot *s = &cache.slots[i];

		if (!s->used_ms || s->dev != dev || s->ino != ino || !s->kept.taken_ms)
			continue;
		rc = clock_ms() - s->kept.taken_ms < LISTENERS_KEEP_MS ?
			     search(&s->kept, inos, n, path, rec) :
			     -ESTALE;
	}
	pthread_mutex_unlock(&cache.lock);
	return rc;
}

/* A fresh dump kept for (dev, ino), in place of the one before. */
static void keep(dev_t dev, ino_t ino, struct listeners *l)
{
	pthread_mutex_lock(&cache.lock);
	for (size_t i = 0; i < ARRAY_SIZE(cache.slots) && l->rec; i++) {
		struct slot *s = &cache.slots[i];

		if (s->used_ms && s->dev == dev && s->ino == ino) {
			free(s->kept.rec);
			s->kept = *l;
			l->rec = NULL;
		}
	}
	pthread_mutex_unlock(&cache.lock);
	free(l->rec);
}

/*
 * `inos` asked about one by one (with 1000 listeners in the namespace a
 * dump took ~1 ms, each question ~30 us): the first that listens on
 * `path`, 1 and *rec; 0 none; <0 a question failed (a dump is made
 * instead).
 */
static int search_exact(int nl, const uint32_t *inos, int n, const char *path, struct sockdiag_rec *rec)
{
	for (int i = 0; i < n; i++) {
		int err = sockdiag_query_one(nl, inos[i], UDIAG_SHOW_NAME | UDIAG_SHOW_VFS, rec);

		if (err == -ENOENT)
			continue; /* closed meanwhile */
		if (err)
			return err;
		if (rec->state == SOCKDIAG_LISTEN && named(rec, path))
			return 1;
	}
	return 0;
}

int sockdiag_find_listener(int pid, const uint32_t *inos, int n, const char *path,
			   struct sockdiag_rec *rec)
{
	struct listeners l = { 0 };
	dev_t dev;
	ino_t ino;
	int nl = socket_for(pid, &dev, &ino), rc;

	if (nl < 0)
		return nl;
	rc = search_kept(dev, ino, inos, n, path, rec);
	if (rc == 1)
		return rc;
	/*
	 * A dump is worth it for many look-ups at once (1000 targets connected
	 * in attach mode: one dump); one look-up of a few sockets asks about
	 * each (with the joined targets out of the model's pass, a dump is
	 * seldom young: each join made a new one, ~1 ms with 1000 listeners).
	 */
	if ((rc == 0 || rc == -ESTALE) && n <= EXACT_ASKS_MAX &&
	    (rc = search_exact(nl, inos, n, path, rec)) >= 0)
		return rc;
	/* None kept, or a question failed: a new dump. */
	rc = sockdiag_query(nl, 0, 1U << SOCKDIAG_LISTEN, UDIAG_SHOW_NAME | UDIAG_SHOW_VFS,
			    add_listener, &l);
	if (!rc && l.too_many)
		rc = -E2BIG;
	if (rc) {
		if (rc != -EOPNOTSUPP && rc != -E2BIG)
			sockdiag_socket_drop(nl);
		free(l.rec);
		return rc;
	}
	if (l.n)
		qsort(l.rec, (size_t)l.n, sizeof(*l.rec), by_ino);
	rc = search(&l, inos, n, path, rec);
	l.taken_ms = clock_ms() ? clock_ms() : 1;
	keep(dev, ino, &l);
	return rc;
}
