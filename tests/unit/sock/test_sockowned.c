// SPDX-License-Identifier: MIT
/*
 * Which listener a process holds on a path (sock/sockowned.c), against the
 * kernel: found among the process's own fds through sock_diag, from one
 * dump of the namespace's listeners kept a moment (sockdiag_find_listener);
 * a listener younger than the dump found all the same; an accepted socket
 * on the path, a listener on another path, another process's listener on
 * the same path and a closed listener still in the kept dump are never
 * taken for the process's.
 */
#include <errno.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sock/sockdiag.h"
#include "sock/sockstate.h"
#include "unit.h"

struct fixture {
	char dir[64];
	char path[3][96];
	int lfd[3];
};

static int listen_on(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 4)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static uint32_t ino_of(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 ? (uint32_t)st.st_ino : 0;
}

static bool have_unix_diag(void)
{
	int nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	struct sockdiag_rec r;
	bool yes;

	if (nl < 0)
		return false;
	/* A dump of no state answers DONE with unix_diag, ENOENT without. */
	yes = sockdiag_query(nl, 0, 0, 0, NULL, &r) == 0;
	close(nl);
	return yes;
}

static int fixture_open(struct fixture *f)
{
	snprintf(f->dir, sizeof(f->dir), "/tmp/dynprof-sockowned-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	for (int i = 0; i < 3; i++) {
		snprintf(f->path[i], sizeof(f->path[i]), "%s/s%d", f->dir, i);
		f->lfd[i] = -1;
	}
	return 0;
}

static void fixture_close(struct fixture *f)
{
	for (int i = 0; i < 3; i++) {
		if (f->lfd[i] >= 0)
			close(f->lfd[i]);
		unlink(f->path[i]);
	}
	rmdir(f->dir);
}

TEST(sockowned_listener_among_own_fds)
{
	struct fixture f;
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct sock_owned o;
	struct stat st;
	int cfd, afd;

	if (!have_unix_diag()) {
		printf("  (no unix_diag here: skipped)\n");
		return;
	}
	REQUIRE(fixture_open(&f) == 0);
	f.lfd[0] = listen_on(f.path[0]);
	f.lfd[1] = listen_on(f.path[1]);
	REQUIRE(f.lfd[0] >= 0 && f.lfd[1] >= 0);
	/* An accepted socket on path 0, held before its listener in fd order. */
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", f.path[0]);
	cfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	REQUIRE(cfd >= 0 && connect(cfd, (struct sockaddr *)&a, sizeof(a)) == 0);
	afd = accept(f.lfd[0], NULL, NULL);
	REQUIRE(afd >= 0);

	CHECK_INT(sockstate_owned(getpid(), f.path[0], &o), 0);
	CHECK(o.listener == ino_of(f.lfd[0]));
	REQUIRE(o.listener_known && stat(f.path[0], &st) == 0);
	CHECK(o.listener_rec.has_vfs && o.listener_rec.vfs_ino == (uint32_t)st.st_ino);
	CHECK(sockdiag_same_dev(o.listener_rec.vfs_dev, st.st_dev));
	CHECK_INT(o.nconnected, 0); /* the connection's sockets are not asked about */
	CHECK_INT(sockstate_owned(getpid(), f.path[1], &o), 0);
	CHECK(o.listener == ino_of(f.lfd[1]));

	/* Made after the kept dump: found by a new one. */
	f.lfd[2] = listen_on(f.path[2]);
	REQUIRE(f.lfd[2] >= 0);
	CHECK_INT(sockstate_owned(getpid(), f.path[2], &o), 0);
	CHECK(o.listener == ino_of(f.lfd[2]));

	/* Closed: still in the kept dump, no longer among the fds. */
	close(f.lfd[1]);
	f.lfd[1] = -1;
	CHECK_INT(sockstate_owned(getpid(), f.path[1], &o), 0);
	CHECK(o.listener == 0);
	/* A path nobody listens on: the accepted socket on path 0 is not a listener of it. */
	CHECK_INT(sockstate_owned(getpid(), "/nowhere/at/all", &o), 0);
	CHECK(o.listener == 0);
	close(cfd);
	close(afd);
	fixture_close(&f);
}

/* Another process's listener on a path: not the caller's, though the dump lists it. */
TEST(sockowned_another_process_listener_is_not_ours)
{
	struct fixture f;
	struct sock_owned o;
	int ready[2], status;
	pid_t child;
	char c;

	if (!have_unix_diag()) {
		printf("  (no unix_diag here: skipped)\n");
		return;
	}
	REQUIRE(fixture_open(&f) == 0 && pipe(ready) == 0);
	child = fork();
	REQUIRE(child >= 0);
	if (child == 0) {
		int fd = listen_on(f.path[0]);

		close(ready[0]);
		if (fd < 0 || write(ready[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(ready[1]);
	REQUIRE(read(ready[0], &c, 1) == 1);
	close(ready[0]);
	/* The child's, found for the child (its fds are readable: same user). */
	CHECK_INT(sockstate_owned(child, f.path[0], &o), 0);
	CHECK(o.listener != 0 && o.listener_known);
	/* The same path for this process, with the child's listener kept in the dump: none. */
	CHECK_INT(sockstate_owned(getpid(), f.path[0], &o), 0);
	CHECK(o.listener == 0);
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	fixture_close(&f);
}

/* The kept dump's search itself: only the given sockets, only on the path. */
TEST(sockdiag_find_listener_only_given_inodes)
{
	struct fixture f;
	struct sockdiag_rec r;
	uint32_t inos[2];

	if (!have_unix_diag()) {
		printf("  (no unix_diag here: skipped)\n");
		return;
	}
	REQUIRE(fixture_open(&f) == 0);
	f.lfd[0] = listen_on(f.path[0]);
	f.lfd[1] = listen_on(f.path[1]);
	REQUIRE(f.lfd[0] >= 0 && f.lfd[1] >= 0);
	inos[0] = ino_of(f.lfd[1]);
	inos[1] = ino_of(f.lfd[0]);
	CHECK_INT(sockdiag_find_listener(getpid(), inos, 2, f.path[0], &r), 1);
	CHECK(r.ino == ino_of(f.lfd[0]) && r.state == SOCKDIAG_LISTEN);
	CHECK_INT(sockdiag_find_listener(getpid(), inos, 1, f.path[0], &r), 0);
	CHECK_INT(sockdiag_find_listener(getpid(), inos, 0, f.path[0], &r), 0);
	fixture_close(&f);
}

UNIT_MAIN()
