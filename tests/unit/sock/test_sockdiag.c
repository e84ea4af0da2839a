// SPDX-License-Identifier: MIT
/*
 * sock_diag answers (sock/sockdiag.c) parsed from crafted buffers: records
 * with VFS, PEER and SHUTDOWN, a dump's DONE, errors, and hostile lengths
 * (every header and attribute bound-checked). One live query against the
 * kernel when unix_diag is there.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include "sock/sockdiag.h"
#include "unit.h"

struct sink {
	struct sockdiag_rec recs[8];
	int n;
};

static void collect(void *ctx, const struct sockdiag_rec *r)
{
	struct sink *s = ctx;

	if (s->n < 8)
		s->recs[s->n++] = *r;
}

/* A tiny writer of netlink messages into a buffer. */
struct wbuf {
	unsigned char b[2048];
	size_t len;
	size_t msg; /* start of the open message */
};

static void put(struct wbuf *w, const void *p, size_t n)
{
	memcpy(w->b + w->len, p, n);
	w->len += n;
}

static void pad(struct wbuf *w)
{
	while (w->len % 4)
		w->b[w->len++] = 0;
}

static void msg_begin(struct wbuf *w, uint16_t type, uint32_t seq)
{
	struct nlmsghdr nh = { .nlmsg_type = type, .nlmsg_seq = seq };

	w->msg = w->len;
	put(w, &nh, sizeof(nh));
}

static void msg_end(struct wbuf *w)
{
	uint32_t len = (uint32_t)(w->len - w->msg);

	memcpy(w->b + w->msg, &len, sizeof(len));
	pad(w);
}

static void diag_msg(struct wbuf *w, uint8_t state, uint32_t ino)
{
	struct unix_diag_msg m = { .udiag_family = AF_UNIX,
				   .udiag_type = SOCK_STREAM,
				   .udiag_state = state,
				   .udiag_ino = ino };

	put(w, &m, sizeof(m));
}

static void attr(struct wbuf *w, uint16_t type, const void *p, size_t n)
{
	struct nlattr a = { .nla_len = (uint16_t)(NLA_HDRLEN + n), .nla_type = type };

	put(w, &a, sizeof(a));
	put(w, p, n);
	pad(w);
}

TEST(sockdiag_build_dump_and_exact)
{
	unsigned char b[SOCKDIAG_REQ_LEN];
	struct nlmsghdr nh;
	struct unix_diag_req r;

	CHECK_INT(sockdiag_build(b, 0, 1U << 10, UDIAG_SHOW_VFS, 7), SOCKDIAG_REQ_LEN);
	memcpy(&nh, b, sizeof(nh));
	memcpy(&r, b + sizeof(nh), sizeof(r));
	CHECK_INT(nh.nlmsg_len, SOCKDIAG_REQ_LEN);
	CHECK_INT(nh.nlmsg_type, SOCK_DIAG_BY_FAMILY);
	CHECK(nh.nlmsg_flags & NLM_F_DUMP);
	CHECK_INT(nh.nlmsg_seq, 7);
	CHECK_INT(r.sdiag_family, AF_UNIX);
	CHECK_INT(r.udiag_states, 1U << 10);
	CHECK_INT(r.udiag_show, UDIAG_SHOW_VFS);
	sockdiag_build(b, 1234, 0, UDIAG_SHOW_PEER, 8);
	memcpy(&nh, b, sizeof(nh));
	memcpy(&r, b + sizeof(nh), sizeof(r));
	CHECK(!(nh.nlmsg_flags & NLM_F_DUMP));
	CHECK_INT(r.udiag_ino, 1234);
	CHECK(r.udiag_cookie[0] == ~0U && r.udiag_cookie[1] == ~0U);
}

TEST(sockdiag_parse_listener_vfs_and_stale_peer)
{
	struct wbuf w = { .len = 0 };
	struct unix_diag_vfs vfs = { .udiag_vfs_ino = 555, .udiag_vfs_dev = (8U << 20) | 3 };
	uint32_t peer0 = 0, peer9 = 9;
	uint8_t sd3 = 3, sd0 = 0;
	struct sink s = { .n = 0 };

	msg_begin(&w, SOCK_DIAG_BY_FAMILY, 5);
	diag_msg(&w, SOCKDIAG_LISTEN, 100);
	attr(&w, UNIX_DIAG_NAME, "/root/dynamic_profiling_socket_1", 32);
	attr(&w, UNIX_DIAG_VFS, &vfs, sizeof(vfs));
	attr(&w, UNIX_DIAG_SHUTDOWN, &sd0, 1);
	msg_end(&w);
	msg_begin(&w, SOCK_DIAG_BY_FAMILY, 5);
	diag_msg(&w, SOCKDIAG_ESTABLISHED, 101);
	attr(&w, UNIX_DIAG_PEER, &peer0, 4);
	attr(&w, UNIX_DIAG_SHUTDOWN, &sd3, 1);
	msg_end(&w);
	msg_begin(&w, SOCK_DIAG_BY_FAMILY, 5);
	diag_msg(&w, SOCKDIAG_ESTABLISHED, 102);
	attr(&w, UNIX_DIAG_PEER, &peer9, 4);
	attr(&w, UNIX_DIAG_SHUTDOWN, &sd0, 1);
	msg_end(&w);
	/* Another request's answer in the same datagram is not ours. */
	msg_begin(&w, SOCK_DIAG_BY_FAMILY, 6);
	diag_msg(&w, SOCKDIAG_ESTABLISHED, 999);
	msg_end(&w);
	CHECK_INT(sockdiag_parse(w.b, w.len, 5, false, collect, &s), 0);
	REQUIRE(s.n == 3);
	CHECK_INT(s.recs[0].ino, 100);
	CHECK(s.recs[0].has_vfs && s.recs[0].vfs_ino == 555);
	CHECK(sockdiag_same_dev(s.recs[0].vfs_dev, makedev(8, 3)));
	CHECK(!sockdiag_same_dev(s.recs[0].vfs_dev, makedev(8, 4)));
	CHECK(!s.recs[0].has_peer);
	CHECK(!sockdiag_live_peer(&s.recs[1])); /* peer 0, shut down: stale */
	CHECK(sockdiag_live_peer(&s.recs[2]));  /* a client is there */
	msg_begin(&w, NLMSG_DONE, 5);
	put(&w, &(int){ 0 }, 4);
	msg_end(&w);
	s.n = 0;
	CHECK_INT(sockdiag_parse(w.b, w.len, 5, false, collect, &s), 1);
	CHECK_INT(s.n, 3);
}

/* UNIX_DIAG_NAME: a path with its NUL, an abstract name's NULs; the text as /proc/net/unix prints it. */
TEST(sockdiag_parse_name_and_its_text)
{
	struct wbuf w = { .len = 0 };
	struct sink s = { .n = 0 };
	char text[SOCKDIAG_NAME_MAX + 2], big[SOCKDIAG_NAME_MAX + 1];

	msg_begin(&w, SOCK_DIAG_BY_FAMILY, 5);
	diag_msg(&w, SOCKDIAG_LISTEN, 100);
	attr(&w, UNIX_DIAG_NAME, "/root/dynamic_profiling_socket_1", 33); /* the NUL counted */
	msg_end(&w);
	msg_begin(&w, SOCK_DIAG_BY_FAMILY, 5);
	diag_msg(&w, SOCKDIAG_LISTEN, 101);
	attr(&w, UNIX_DIAG_NAME, "\0dyn_prof_sock_7\0x", 18); /* every byte is the name */
	msg_end(&w);
	msg_begin(&w, SOCK_DIAG_BY_FAMILY, 5);
	diag_msg(&w, SOCKDIAG_ESTABLISHED, 102); /* unbound: no name */
	msg_end(&w);
	CHECK_INT(sockdiag_parse(w.b, w.len, 5, false, collect, &s), 0);
	REQUIRE(s.n == 3);
	CHECK(s.recs[0].has_name && s.recs[0].name_len == 33);
	CHECK_INT(sockdiag_name_text(&s.recs[0], text, sizeof(text)), 0);
	CHECK_STR(text, "/root/dynamic_profiling_socket_1");
	CHECK_INT(sockdiag_name_text(&s.recs[1], text, sizeof(text)), 0);
	CHECK_STR(text, "@dyn_prof_sock_7@x");
	CHECK(!s.recs[2].has_name);
	CHECK_INT(sockdiag_name_text(&s.recs[2], text, sizeof(text)), -ENOENT);
	CHECK_INT(sockdiag_name_text(&s.recs[0], text, 10), -ENAMETOOLONG);
	/* Longer than sun_path: not an address. */
	memset(big, 'a', sizeof(big));
	w.len = 0;
	s.n = 0;
	msg_begin(&w, SOCK_DIAG_BY_FAMILY, 5);
	diag_msg(&w, SOCKDIAG_LISTEN, 103);
	attr(&w, UNIX_DIAG_NAME, big, sizeof(big));
	msg_end(&w);
	CHECK_INT(sockdiag_parse(w.b, w.len, 5, false, collect, &s), -EBADMSG);
	CHECK_INT(s.n, 0);
}

TEST(sockdiag_parse_exact_answer_and_errors)
{
	struct wbuf w = { .len = 0 };
	struct sink s = { .n = 0 };
	int err = -ENOENT;

	msg_begin(&w, SOCK_DIAG_BY_FAMILY, 9);
	diag_msg(&w, SOCKDIAG_ESTABLISHED, 42);
	msg_end(&w);
	CHECK_INT(sockdiag_parse(w.b, w.len, 9, true, collect, &s), 1);
	CHECK_INT(s.n, 1);
	w.len = 0;
	msg_begin(&w, NLMSG_ERROR, 9);
	put(&w, &err, sizeof(err));
	msg_end(&w);
	CHECK_INT(sockdiag_parse(w.b, w.len, 9, true, collect, &s), -ENOENT);
	/* An error value no errno has is malformed. */
	w.len = 0;
	err = -100000;
	msg_begin(&w, NLMSG_ERROR, 9);
	put(&w, &err, sizeof(err));
	msg_end(&w);
	CHECK_INT(sockdiag_parse(w.b, w.len, 9, true, collect, &s), -EBADMSG);
}

TEST(sockdiag_parse_refuses_hostile_lengths)
{
	struct wbuf w = { .len = 0 };
	struct sink s = { .n = 0 };
	uint32_t peer = 5;
	struct nlattr bad = { .nla_len = 200, .nla_type = UNIX_DIAG_PEER };
	struct nlattr tiny = { .nla_len = 2, .nla_type = UNIX_DIAG_PEER };

	/* An attribute longer than its message. */
	msg_begin(&w, SOCK_DIAG_BY_FAMILY, 1);
	diag_msg(&w, SOCKDIAG_ESTABLISHED, 1);
	put(&w, &bad, sizeof(bad));
	put(&w, &peer, 4);
	msg_end(&w);
	CHECK_INT(sockdiag_parse(w.b, w.len, 1, false, collect, &s), -EBADMSG);
	/* An attribute shorter than its own header. */
	w.len = 0;
	msg_begin(&w, SOCK_DIAG_BY_FAMILY, 1);
	diag_msg(&w, SOCKDIAG_ESTABLISHED, 1);
	put(&w, &tiny, sizeof(tiny));
	msg_end(&w);
	CHECK_INT(sockdiag_parse(w.b, w.len, 1, false, collect, &s), -EBADMSG);
	/* A PEER too short for its value; a VFS too short for its struct. */
	w.len = 0;
	msg_begin(&w, SOCK_DIAG_BY_FAMILY, 1);
	diag_msg(&w, SOCKDIAG_ESTABLISHED, 1);
	attr(&w, UNIX_DIAG_PEER, &peer, 2);
	msg_end(&w);
	CHECK_INT(sockdiag_parse(w.b, w.len, 1, false, collect, &s), -EBADMSG);
	w.len = 0;
	msg_begin(&w, SOCK_DIAG_BY_FAMILY, 1);
	diag_msg(&w, SOCKDIAG_LISTEN, 1);
	attr(&w, UNIX_DIAG_VFS, &peer, 4);
	msg_end(&w);
	CHECK_INT(sockdiag_parse(w.b, w.len, 1, false, collect, &s), -EBADMSG);
	/* A message header claiming more than the datagram, or less than itself. */
	w.len = 0;
	msg_begin(&w, SOCK_DIAG_BY_FAMILY, 1);
	diag_msg(&w, SOCKDIAG_ESTABLISHED, 1);
	msg_end(&w);
	CHECK_INT(sockdiag_parse(w.b, w.len - 4, 1, false, collect, &s), -EBADMSG);
	memcpy(w.b, &(uint32_t){ 3 }, 4);
	CHECK_INT(sockdiag_parse(w.b, w.len, 1, false, collect, &s), -EBADMSG);
	/* A body too short for unix_diag_msg. */
	w.len = 0;
	msg_begin(&w, SOCK_DIAG_BY_FAMILY, 1);
	put(&w, "abcd", 4);
	msg_end(&w);
	CHECK_INT(sockdiag_parse(w.b, w.len, 1, false, collect, &s), -EBADMSG);
	CHECK_INT(s.n, 0);
	/* Fewer bytes than a header: nothing, no crash. */
	CHECK_INT(sockdiag_parse(w.b, 3, 1, false, collect, &s), 0);
}

TEST(sockdiag_live_needs_a_peer_and_an_open_connection)
{
	struct sockdiag_rec r = { .has_peer = true, .peer = 9, .has_shutdown = true, .shutdown = 0 };

	CHECK(sockdiag_live_peer(&r));
	r.peer = 0; /* the client's socket is released */
	CHECK(!sockdiag_live_peer(&r));
	r.peer = 9;
	r.shutdown = SOCKDIAG_SHUTDOWN_BOTH; /* closed both ways */
	CHECK(!sockdiag_live_peer(&r));
	r.shutdown = 1; /* half-closed: still there */
	CHECK(sockdiag_live_peer(&r));
	r.has_peer = false; /* not asked, or not said: not a client */
	CHECK(!sockdiag_live_peer(&r));
}

/* The kernel itself: a listener's VFS is its file, an accepted socket's peer goes to 0. */
TEST(sockdiag_kernel_vfs_and_stale_peer)
{
	char path[] = "/tmp/dynprof-sockdiag-XXXXXX";
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct stat st, lst;
	struct sink s = { .n = 0 };
	int nl, lfd, cfd, afd, rc;

	REQUIRE(mkdtemp(path) != NULL);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s/s", path);
	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	REQUIRE(lfd >= 0 && bind(lfd, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(lfd, 1) == 0);
	cfd = socket(AF_UNIX, SOCK_STREAM, 0);
	REQUIRE(connect(cfd, (struct sockaddr *)&a, sizeof(a)) == 0);
	afd = accept(lfd, NULL, NULL);
	REQUIRE(afd >= 0);
	nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	REQUIRE(nl >= 0);
	REQUIRE(stat(a.sun_path, &st) == 0 && fstat(lfd, &lst) == 0);
	rc = sockdiag_query(nl, (uint32_t)lst.st_ino, 0, UDIAG_SHOW_VFS, collect, &s);
	if (rc == -ENOENT || rc == -EOPNOTSUPP) {
		printf("  (no unix_diag here: skipped)\n");
	} else {
		CHECK_INT(rc, 0);
		REQUIRE(s.n == 1);
		CHECK(s.recs[0].has_vfs && s.recs[0].vfs_ino == (uint32_t)st.st_ino);
		CHECK(sockdiag_same_dev(s.recs[0].vfs_dev, st.st_dev));
		REQUIRE(fstat(afd, &lst) == 0);
		s.n = 0;
		CHECK_INT(sockdiag_query(nl, (uint32_t)lst.st_ino, 0, UDIAG_SHOW_PEER, collect, &s), 0);
		REQUIRE(s.n == 1);
		CHECK(sockdiag_live_peer(&s.recs[0]));
		close(cfd);
		s.n = 0;
		CHECK_INT(sockdiag_query(nl, (uint32_t)lst.st_ino, 0, UDIAG_SHOW_PEER, collect, &s), 0);
		REQUIRE(s.n == 1);
		CHECK(!sockdiag_live_peer(&s.recs[0]));
		cfd = -1;
	}
	if (cfd >= 0)
		close(cfd);
	close(afd);
	close(lfd);
	close(nl);
	unlink(a.sun_path);
	rmdir(path);
}

/*
 * Threads asking through one netlink socket at once (the loop and a join
 * beside it share a namespace's cached socket): every query gets its own
 * answer. Unserialised, one thread read and skipped another's reply, which
 * then waited 1 s and failed with ETIMEDOUT.
 */
struct asker {
	int nl;
	uint32_t ino;
	int failed, first_err;
};

#define ASKS 300

static void *ask_many(void *arg)
{
	struct asker *a = arg;

	for (int i = 0; i < ASKS; i++) {
		struct sink s = { .n = 0 };
		int rc = sockdiag_query(a->nl, a->ino, 0, UDIAG_SHOW_VFS, collect, &s);

		if (rc || s.n != 1) {
			a->failed++;
			if (!a->first_err)
				a->first_err = rc ? rc : -EPROTO;
			if (rc == -ETIMEDOUT)
				break; /* each costs 1 s: one is enough to tell */
		}
	}
	return NULL;
}

TEST(sockdiag_threads_sharing_a_socket_each_get_their_answer)
{
	char path[] = "/tmp/dynprof-sockdiag-XXXXXX";
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct asker askers[4];
	pthread_t th[4];
	struct stat lst;
	int nl, lfd;

	REQUIRE(mkdtemp(path) != NULL);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s/s", path);
	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	REQUIRE(lfd >= 0 && bind(lfd, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(lfd, 1) == 0);
	nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	REQUIRE(nl >= 0 && fstat(lfd, &lst) == 0);
	if (sockdiag_query(nl, (uint32_t)lst.st_ino, 0, UDIAG_SHOW_VFS, collect,
			   &(struct sink){ .n = 0 }) == -EOPNOTSUPP) {
		printf("  (no unix_diag here: skipped)\n");
	} else {
		for (int i = 0; i < 4; i++) {
			askers[i] = (struct asker){ .nl = nl, .ino = (uint32_t)lst.st_ino };
			REQUIRE(pthread_create(&th[i], NULL, ask_many, &askers[i]) == 0);
		}
		for (int i = 0; i < 4; i++) {
			pthread_join(th[i], NULL);
			if (askers[i].failed)
				printf("  thread %d: %d of %d queries failed, first: %s\n", i,
				       askers[i].failed, ASKS, strerror(-askers[i].first_err));
			CHECK_INT(askers[i].failed, 0);
		}
	}
	close(nl);
	close(lfd);
	unlink(a.sun_path);
	rmdir(path);
}

UNIT_MAIN()
