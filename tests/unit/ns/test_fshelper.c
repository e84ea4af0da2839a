// SPDX-License-Identifier: MIT
/*
 * The per-target helper against real processes: a target forked here
 * runs as nobody (65534), in its own mount namespace, or in its own user
 * namespace; the helper must act with that user's rights (the kernel
 * refusing what nobody may not do), see what the target sees, and stream
 * a folder out under the limits. Needs root (make test runs as root).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "results/copytree.h"
#include "ns/fshelper.h"
#include "unit.h"

#define NOBODY 65534

enum target_kind { PLAIN, OWN_MNT, OWN_USER };

static pid_t last_target;

struct tgt {
	pid_t pid;
	int go; /* parent -> child: maps written */
};

/* A target running as nobody; OWN_MNT/OWN_USER mount a tmpfs at `mnt` visible only to it. */
static int start_target(struct tgt *t, enum target_kind kind, const char *mnt)
{
	int ready[2], go[2];
	char c;

	if (last_target > 0) { /* one a failed REQUIRE left */
		kill(last_target, SIGKILL);
		waitpid(last_target, NULL, 0);
	}
	if (pipe(ready) || pipe(go))
		return -1;
	t->pid = fork();
	last_target = t->pid;
	if (t->pid < 0)
		return -1;
	if (t->pid == 0) {
		if (kind == OWN_MNT &&
		    (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		     mount("tmpfs", mnt, "tmpfs", 0, "mode=0777")))
			_exit(1);
		if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
		    setresuid(NOBODY, NOBODY, NOBODY))
			_exit(1);
		/* After the id change (which clears it): a test that ends early leaves no target. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() == 1)
			_exit(1);
		if (kind == OWN_USER) {
			if (unshare(CLONE_NEWUSER | CLONE_NEWNS))
				_exit(1);
			if (write(ready[1], "u", 1) != 1 || read(go[0], &c, 1) != 1)
				_exit(1);
			if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
			    mount("tmpfs", mnt, "tmpfs", 0, "mode=0777"))
				_exit(1);
		}
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	if (read(ready[0], &c, 1) != 1)
		return -1;
	if (c == 'u') {
		char path[64];
		const char *files[] = { "setgroups", "uid_map", "gid_map" };
		const char *text[] = { "deny", "0 65534 1\n", "0 65534 1\n" };

		for (int i = 0; i < 3; i++) {
			int fd;

			snprintf(path, sizeof(path), "/proc/%d/%s", (int)t->pid, files[i]);
			fd = open(path, O_WRONLY);
			if (fd < 0 || write(fd, text[i], strlen(text[i])) < 0)
				return -1;
			close(fd);
		}
		if (write(go[1], "g", 1) != 1 || read(ready[0], &c, 1) != 1)
			return -1;
	}
	close(ready[0]);
	close(ready[1]);
	close(go[0]);
	close(go[1]);
	return c == 'r' ? 0 : -1;
}

static void stop_target(struct tgt *t)
{
	kill(t->pid, SIGKILL);
	waitpid(t->pid, NULL, 0);
	last_target = 0;
}

static char base[64];

static void make_base(void)
{
	snprintf(base, sizeof(base), "/tmp/dp-fsh.XXXXXX");
	if (mkdtemp(base))
		chmod(base, 0755);
}

static void put(const char *rel, const char *text, mode_t mode, uid_t uid)
{
	char p[512];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, mode);
	if (fd >= 0) {
		if (write(fd, text, strlen(text)) < 0) {
			/* the test's own check finds it missing */
		}
		if (fchown(fd, uid, uid) || fchmod(fd, mode)) {
			/* idem */
		}
		close(fd);
	}
}

static void dir_of(const char *rel, mode_t mode, uid_t uid)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	if (mkdir(p, mode) == 0 && (chown(p, uid, uid) || chmod(p, mode))) {
		/* the test's checks fail */
	}
}

static bool exists(const char *rel)
{
	char p[512];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	return lstat(p, &st) == 0;
}

static void cleanup(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", base);
	if (system(cmd)) {
		/* a temp folder left behind */
	}
}

static struct fshelper *helper_of(struct tgt *t)
{
	struct fshelper *h = NULL;
	char why[256] = "";
	int rc = fshelper_start(t->pid, &h, why, sizeof(why));

	if (rc)
		printf("  fshelper_start: %s (%s)\n", strerror(-rc), why);
	return h;
}

static char home[256];

/* A result folder made by the helper in a home of nobody's. */
static int held_result(struct fshelper *h)
{
	dir_of("home", 0755, NOBODY);
	snprintf(home, sizeof(home), "%s/home", base);
	return fshelper_result_dir(h, home, ".dynprof", "77");
}

TEST(helper_reads_as_the_target_user_not_as_root)
{
	struct tgt t;
	struct fshelper *h;
	char p[256], *buf = NULL;
	size_t n;

	make_base();
	put("secret", "root only\n", 0600, 0);
	put("public", "for all\n", 0644, 0);
	REQUIRE(start_target(&t, PLAIN, NULL) == 0);
	h = helper_of(&t);
	REQUIRE(h);
	CHECK(fshelper_pid(h) > 0);
	snprintf(p, sizeof(p), "%s/secret", base);
	CHECK_INT(fshelper_read(h, p, 4096, &buf, &n), -EACCES);
	snprintf(p, sizeof(p), "%s/public", base);
	REQUIRE(fshelper_read(h, p, 4096, &buf, &n) == 0);
	CHECK_STR(buf, "for all\n");
	free(buf);
	CHECK_INT(fshelper_read(h, p, 3, &buf, &n), -EFBIG);
	CHECK_INT(fshelper_read(h, "/dev/zero", 4096, &buf, &n), -EMEDIUMTYPE);
	fshelper_stop(h);
	stop_target(&t);
	cleanup();
}

TEST(result_dir_only_where_the_target_user_may_make_it)
{
	struct tgt t;
	struct fshelper *h;
	char p[512];
	struct stat st;

	make_base();
	REQUIRE(start_target(&t, PLAIN, NULL) == 0);
	h = helper_of(&t);
	REQUIRE(h);
	/* A root-owned home: root could make the folder; nobody may not. */
	CHECK_INT(fshelper_result_dir(h, base, ".dynprof", "77"), -EACCES);
	CHECK(!exists(".dynprof"));
	REQUIRE(held_result(h) == 0);
	snprintf(p, sizeof(p), "%s/home/.dynprof/77", base);
	REQUIRE(stat(p, &st) == 0);
	CHECK_INT((int)st.st_uid, NOBODY);
	/* A symlink in its place, and a folder that is someone else's, are refused. */
	dir_of("home2", 0755, NOBODY);
	snprintf(p, sizeof(p), "%s/home2/.dynprof", base);
	REQUIRE(symlink("/tmp", p) == 0);
	lchown(p, NOBODY, NOBODY);
	snprintf(p, sizeof(p), "%s/home2", base);
	CHECK_INT(fshelper_result_dir(h, p, ".dynprof", "77"), -ENOTDIR);
	dir_of("home3", 0755, NOBODY);
	dir_of("home3/.dynprof", 0777, 0);
	snprintf(p, sizeof(p), "%s/home3", base);
	CHECK_INT(fshelper_result_dir(h, p, ".dynprof", "77"), -EPERM);
	CHECK_INT(fshelper_result_dir(h, p, "..", "77"), -EINVAL);
	fshelper_stop(h);
	stop_target(&t);
	cleanup();
}

static void listed(void *ctx, const char *name, int kind)
{
	char *out = ctx;

	snprintf(out + strlen(out), 256 - strlen(out), "%s:%d ", name, kind);
}

TEST(helper_sees_the_target_mount_namespace)
{
	struct tgt t;
	struct fshelper *h;
	char p[256], list[256] = "", *buf = NULL;
	size_t n;

	make_base();
	dir_of("m", 0755, 0);
	snprintf(p, sizeof(p), "%s/m", base);
	REQUIRE(start_target(&t, OWN_MNT, p) == 0);
	h = helper_of(&t);
	REQUIRE(h);
	/* The tmpfs is the target's alone: the helper makes its home there. */
	snprintf(home, sizeof(home), "%s/m", base);
	REQUIRE(fshelper_result_dir(h, home, ".dynprof", "9") == 0);
	CHECK(!exists("m/.dynprof"));
	CHECK_INT(fshelper_list(h, listed, list), 0);
	CHECK_STR(list, "");
	fshelper_stop(h);
	stop_target(&t);
	(void)buf;
	(void)n;
	cleanup();
}

TEST(helper_joins_a_user_namespace_as_its_user)
{
	struct tgt t;
	struct fshelper *h;
	char p[256], *buf = NULL;
	size_t n;

	make_base();
	put("secret", "root only\n", 0600, 0);
	dir_of("m", 0755, 0);
	snprintf(p, sizeof(p), "%s/m", base);
	REQUIRE(start_target(&t, OWN_USER, p) == 0);
	h = helper_of(&t);
	REQUIRE(h);
	/* "root" inside its namespace, nobody outside: root's file stays closed. */
	snprintf(p, sizeof(p), "%s/secret", base);
	CHECK_INT(fshelper_read(h, p, 4096, &buf, &n), -EACCES);
	snprintf(home, sizeof(home), "%s/m", base);
	CHECK_INT(fshelper_result_dir(h, home, ".dynprof", "9"), 0);
	CHECK_INT(fshelper_result_dir(h, base, ".dynprof", "9"), -EACCES);
	CHECK(!exists(".dynprof"));
	fshelper_stop(h);
	stop_target(&t);
	cleanup();
}

/* A window folder with what a hostile target may put in it. */
static void hostile_window(void)
{
	char rel[1024] = "home/.dynprof/77/PROF_A", name[256];
	int fd;

	dir_of(rel, 0755, NOBODY);
	strcat(rel, "/host");
	dir_of(rel, 0755, NOBODY);
	put("home/.dynprof/77/PROF_A/host/info.json", "{\"a\":1}", 0644, NOBODY);
	put("home/.dynprof/77/PROF_A/setuid", "#!/bin/sh\n", 04755, NOBODY);
	put("home/.dynprof/77/PROF_A/unreadable", "x", 0000, NOBODY);
	snprintf(name, sizeof(name), "%s/home/.dynprof/77/PROF_A/link", base);
	if (symlink("/etc/shadow", name)) {
		/* checked below */
	}
	snprintf(name, sizeof(name), "%s/home/.dynprof/77/PROF_A/fifo", base);
	if (mkfifo(name, 0644) || chown(name, NOBODY, NOBODY)) {
		/* checked below */
	}
	/* 1 GiB with one byte at its end. */
	snprintf(name, sizeof(name), "%s/home/.dynprof/77/PROF_A/sparse", base);
	fd = open(name, O_WRONLY | O_CREAT, 0644);
	if (fd >= 0) {
		if (pwrite(fd, "z", 1, (1 << 30) - 1) != 1 || fchown(fd, NOBODY, NOBODY)) {
			/* checked below */
		}
		close(fd);
	}
	/* A file ending in a hole (`truncate -s 1M`): no data at all. */
	put("home/.dynprof/77/PROF_A/host/hole", "", 0644, NOBODY);
	snprintf(name, sizeof(name), "%s/home/.dynprof/77/PROF_A/host/hole", base);
	if (truncate(name, 1 << 20)) {
		/* checked below */
	}
	/* 30 folders deep, and a name of 255 bytes at the bottom. */
	strcpy(rel, "home/.dynprof/77/PROF_A");
	for (int i = 0; i < 30; i++) {
		strcat(rel, "/d");
		dir_of(rel, 0755, NOBODY);
	}
	memset(name, 'n', 255);
	name[255] = '\0';
	snprintf(rel + strlen(rel), sizeof(rel) - strlen(rel), "/%s", name);
	put(rel, "deep", 0644, NOBODY);
}

TEST(copy_streams_only_folders_and_regular_data)
{
	struct tgt t;
	struct fshelper *h;
	struct fshelper_limits lim = { 1ULL << 40, 1000 };
	struct fshelper_copied done;
	char p[1024];
	struct stat st;
	int out;

	make_base();
	REQUIRE(start_target(&t, PLAIN, NULL) == 0);
	h = helper_of(&t);
	REQUIRE(h);
	REQUIRE(held_result(h) == 0);
	hostile_window();
	dir_of("out", 0750, 0);
	snprintf(p, sizeof(p), "%s/out", base);
	out = open(p, O_PATH | O_DIRECTORY);
	REQUIRE(out >= 0);
	REQUIRE(fshelper_copy(h, "PROF_A", out, "PROF_A", &lim, &done) == 0);
	CHECK(exists("out/PROF_A/host/info.json"));
	CHECK(!exists("out/PROF_A/link") && !exists("out/PROF_A/fifo"));
	CHECK(!exists("out/PROF_A/unreadable"));
	/* symlink, FIFO and the file nobody may read */
	CHECK_INT((int)done.skipped, 3);
	snprintf(p, sizeof(p), "%s/out/PROF_A/setuid", base);
	REQUIRE(stat(p, &st) == 0);
	CHECK_INT((int)(st.st_mode & 07777), 0755);
	CHECK_INT((int)st.st_uid, 0);
	snprintf(p, sizeof(p), "%s/out/PROF_A/sparse", base);
	REQUIRE(stat(p, &st) == 0);
	CHECK(st.st_size == (1 << 30));
	CHECK(st.st_blocks < 1024); /* the hole stayed a hole */
	snprintf(p, sizeof(p), "%s/out/PROF_A/host/hole", base);
	REQUIRE(stat(p, &st) == 0);
	CHECK_INT(st.st_size, 1 << 20); /* not short: its size is the source's */
	CHECK(done.bytes < 100000);
	snprintf(p, sizeof(p), "out/PROF_A");
	for (int i = 0; i < 30; i++)
		strcat(p, "/d");
	strcat(p, "/");
	memset(p + strlen(p) + 255, 0, 1);
	memset(p + strlen(p), 'n', 255);
	CHECK(exists(p));
	/* The source goes, as nobody removes it. */
	CHECK_INT(fshelper_remove(h, "PROF_A"), 0);
	CHECK(!exists("home/.dynprof/77/PROF_A"));
	close(out);
	fshelper_stop(h);
	stop_target(&t);
	cleanup();
}

TEST(copy_limits_leave_the_source_whole_and_nothing_half_made)
{
	struct tgt t;
	struct fshelper *h;
	struct fshelper_limits few_bytes = { 3, 1000 }, few_files = { 1ULL << 40, 5 };
	struct fshelper_copied done;
	char p[256];
	int out;

	make_base();
	REQUIRE(start_target(&t, PLAIN, NULL) == 0);
	h = helper_of(&t);
	REQUIRE(h);
	REQUIRE(held_result(h) == 0);
	hostile_window();
	dir_of("out", 0750, 0);
	snprintf(p, sizeof(p), "%s/out", base);
	out = open(p, O_PATH | O_DIRECTORY);
	REQUIRE(out >= 0);
	CHECK_INT(fshelper_copy(h, "PROF_A", out, "PROF_A", &few_bytes, &done), -EFBIG);
	CHECK(!exists("out/PROF_A"));
	CHECK_INT(fshelper_copy(h, "PROF_A", out, "PROF_A", &few_files, &done), -EMLINK);
	CHECK(!exists("out/PROF_A"));
	CHECK(exists("home/.dynprof/77/PROF_A/host/info.json"));
	/* The helper is still there after a cancelled stream. */
	CHECK_INT(fshelper_copy(h, "nope", out, "nope", &few_files, &done), -ENOENT);
	CHECK_INT(fshelper_copy(h, "../x", out, "x", &few_files, &done), -EINVAL);
	close(out);
	fshelper_stop(h);
	stop_target(&t);
	cleanup();
}

TEST(remove_leaves_what_the_target_user_may_not_remove)
{
	struct tgt t;
	struct fshelper *h;

	make_base();
	REQUIRE(start_target(&t, PLAIN, NULL) == 0);
	h = helper_of(&t);
	REQUIRE(h);
	REQUIRE(held_result(h) == 0);
	dir_of("home/.dynprof/77/PROF_B", 0755, NOBODY);
	dir_of("home/.dynprof/77/PROF_B/rootdir", 0755, 0);
	put("home/.dynprof/77/PROF_B/rootdir/keep", "root's", 0644, 0);
	put("home/.dynprof/77/PROF_B/mine", "x", 0644, NOBODY);
	CHECK(fshelper_remove(h, "PROF_B") < 0);
	CHECK(exists("home/.dynprof/77/PROF_B/rootdir/keep"));
	fshelper_stop(h);
	stop_target(&t);
	cleanup();
}

TEST(a_stalled_helper_is_given_up_within_its_deadline)
{
	struct tgt t;
	struct fshelper *h;
	struct fshelper_limits lim = { 1ULL << 40, 1000 };
	struct fshelper_copied done;
	char p[256];
	int out;

	make_base();
	REQUIRE(start_target(&t, PLAIN, NULL) == 0);
	h = helper_of(&t);
	REQUIRE(h);
	REQUIRE(held_result(h) == 0);
	hostile_window();
	dir_of("out", 0750, 0);
	snprintf(p, sizeof(p), "%s/out", base);
	out = open(p, O_PATH | O_DIRECTORY);
	REQUIRE(out >= 0);
	/* Stopped as a read of a hung file system would stop it. */
	kill(fshelper_pid(h), SIGSTOP);
	CHECK_INT(fshelper_copy(h, "PROF_A", out, "PROF_A", &lim, &done), -ETIMEDOUT);
	CHECK(!exists("out/PROF_A"));
	CHECK_INT(fshelper_remove(h, "PROF_A"), -EPIPE);
	close(out);
	fshelper_stop(h);
	stop_target(&t);
	cleanup();
}

UNIT_MAIN()
