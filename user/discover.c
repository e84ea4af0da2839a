// SPDX-License-Identifier: MIT
/*
 * Exit events for watched targets (see discover.h): the BPF program in
 * bpf/discover.bpf.c and its ring buffer when the kernel lets us load it,
 * else one pidfd per target in an epoll set. Both modes keep the same table
 * of watched pids, so a pid is reported once, only while watched.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "bpf/discover.skel.h"
#include "discover.h"
#include "dynprof/events.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

#ifndef PF_EXITING
#define PF_EXITING 0x00000004 /* include/linux/sched.h, stable since 2.6 */
#endif

#define KERNEL_BTF "/sys/kernel/btf/vmlinux"
/* Inode of the initial pid namespace, fixed by the kernel (proc_ns.h). */
#define PROC_PID_INIT_INO 0xEFFFFFFCU

struct watch {
	int pid;
	int pidfd;         /* fallback: the pidfd in the epoll set; BPF: -1 */
	uint64_t since_ns; /* CLOCK_MONOTONIC when the watch began */
};

struct discover {
	struct discover_bpf *skel; /* NULL: pidfd fallback */
	struct ring_buffer *rb;
	int epfd;                  /* fallback: epoll set of the pidfds */
	struct watch *w;           /* watched pids, unordered */
	size_t n, cap;
	unsigned long long lost_seen;
	bool print_set;
	libbpf_print_fn_t prev_print;
	/* Set for the duration of discover_consume. */
	void (*on_exit)(void *ctx, int pid);
	void *ctx;
	int reported;
};

/* ---- libbpf messages ---------------------------------------------------- */

/*
 * libbpf warns on stderr by default; the tool speaks only through `note`.
 * A failed step quotes the first warning since the step began: libbpf says
 * the cause first ("prog 'dp_exit': BPF program load failed: ...", "Error in
 * bpf_object__probe_loading():...") and its consequences after ("failed to
 * load BPF skeleton"). Skipped: verifier logs (multi-line; the line after
 * one names the failure) and the RLIMIT_MEMLOCK remark libbpf makes on its
 * way to any bpf(2) failure. The last line is kept for when nothing else is.
 */
static char libbpf_first[160], libbpf_last[160];

static void keep_line(char *dst, size_t size, const char *s, size_t len)
{
	if (len >= size)
		len = size - 1;
	memcpy(dst, s, len);
	dst[len] = '\0';
}

static int quiet_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char buf[512];
	const char *s = buf, *stop;
	size_t len;

	if (level != LIBBPF_WARN)
		return 0;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	if (strstr(buf, "BEGIN PROG LOAD LOG"))
		return 0;
	if (strncmp(s, "libbpf: ", 8) == 0)
		s += 8;
	len = strcspn(s, "\n");
	if (len == 0)
		return 0;
	keep_line(libbpf_last, sizeof(libbpf_last), s, len);
	if (libbpf_first[0] || strncmp(s, "Failed to bump RLIMIT_MEMLOCK", 29) == 0)
		return 0;
	stop = strstr(s, ". "); /* first sentence only */
	if (stop && (size_t)(stop - s) < len)
		len = (size_t)(stop - s);
	keep_line(libbpf_first, sizeof(libbpf_first), s, len);
	return 0;
}

/* ---- small helpers ------------------------------------------------------ */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A pidfd for process pid; -EINVAL when pid is a thread but not a leader. */
static int pidfd_open(int pid)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);

	if (fd >= 0)
		return fd;
	/* Before 6.x EINVAL, since ENOENT (seen on 6.18): one answer for callers. */
	return errno == ENOENT ? -EINVAL : -errno;
}

/* A pidfd polls readable once its thread group has exited (zombie or reaped). */
static bool pidfd_exited(int pidfd)
{
	struct pollfd pfd = { .fd = pidfd, .events = POLLIN };

	return poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLIN | POLLHUP | POLLERR));
}

/*
 * True when every thread of pid is inside do_exit(): PF_EXITING (in the
 * flags field of /proc/<pid>/task/<tid>/stat) is set before the exit
 * tracepoint runs. False when some thread is not, or when /proc cannot say.
 */
static bool group_exiting(int pid)
{
	char path[64], buf[512];
	struct dirent *de;
	bool exiting = true;
	int budget = 1 << 16; /* threads */
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return false;
	while (exiting && budget-- > 0 && (de = readdir(dir))) {
		unsigned int flags;
		const char *p;
		char state;
		ssize_t len;
		int fd;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.20s/stat", pid, de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue; /* the thread is gone */
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		/* "tid (comm) state ppid pgrp session tty_nr tpgid flags ..." */
		p = strrchr(buf, ')');
		if (!p || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %u", &state, &flags) != 2) {
			exiting = false; /* cannot tell: assume it lives */
			break;
		}
		if (state != 'Z' && state != 'X' && !(flags & PF_EXITING))
			exiting = false;
	}
	closedir(dir);
	return exiting;
}

/*
 * 0 while pid is a live process the BPF program will still see exit;
 * -ESRCH when it is gone, a zombie, or past the exit tracepoint: the last
 * thread may spend long in do_exit() after it (unmapping gigabytes, closing
 * device files) before the process turns zombie. Other -errno.
 */
static int bpf_target_alive(int pid)
{
	int fd = pidfd_open(pid);
	int err;

	if (fd < 0)
		return fd;
	err = group_exiting(pid) || pidfd_exited(fd) ? -ESRCH : 0;
	close(fd);
	return err;
}

/* Can this process load and attach tracing programs at all? */
static const char *bpf_privilege_problem(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct caps[_LINUX_CAPABILITY_U32S_3];
	bool admin, bpf, perfmon;

	if (syscall(SYS_capget, &hdr, caps) != 0)
		return NULL; /* cannot tell: let the loader find out */
#define HAS_CAP(c) (caps[(c) / 32].effective & (1u << ((c) % 32)))
	admin = HAS_CAP(CAP_SYS_ADMIN);
	bpf = HAS_CAP(CAP_BPF);
	perfmon = HAS_CAP(CAP_PERFMON);
#undef HAS_CAP
	if (admin || (bpf && perfmon))
		return NULL;
	if (geteuid() != 0)
		return "not root";
	return "root without CAP_SYS_ADMIN, or CAP_BPF and CAP_PERFMON";
}

/*
 * The BPF program sees host pids; pids from discover_watch are in our
 * namespace. They agree only in the initial pid namespace. NULL when we are
 * there, else why BPF mode cannot be used.
 */
static const char *pidns_problem(void)
{
	struct stat st;

	if (stat("/proc/self/ns/pid", &st) == 0)
		return st.st_ino == PROC_PID_INIT_INO ? NULL : "not in the initial pid namespace";
	if (access("/proc/self/stat", R_OK) == 0)
		return NULL; /* a kernel without pid namespaces */
	return "/proc is not mounted";
}

/* ---- the table of watched pids ------------------------------------------- */

static ssize_t watch_find(const struct discover *d, int pid)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->w[i].pid == pid)
			return (ssize_t)i;
	return -1;
}

static int watch_add(struct discover *d, int pid, int pidfd, uint64_t since_ns)
{
	if (d->n >= DP_MAX_WATCHED)
		return -ENOSPC;
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 16;
		struct watch *w = realloc(d->w, cap * sizeof(*w));

		if (!w)
			return -ENOMEM;
		d->w = w;
		d->cap = cap;
	}
	d->w[d->n++] = (struct watch){ .pid = pid, .pidfd = pidfd, .since_ns = since_ns };
	return 0;
}

/* Stop watching entry i: out of the kernel map or the epoll set, then the table. */
static void watch_drop(struct discover *d, size_t i)
{
	struct watch *w = &d->w[i];

	if (d->skel) {
		__u32 key = (__u32)w->pid;

		/* -ENOENT when the program already deleted it at the exit. */
		bpf_map__delete_elem(d->skel->maps.watched, &key, sizeof(key), 0);
	} else if (w->pidfd >= 0) {
		epoll_ctl(d->epfd, EPOLL_CTL_DEL, w->pidfd, NULL);
		close(w->pidfd);
	}
	d->w[i] = d->w[--d->n];
}

/* Entry i exited: drop it, then tell the caller (who may change the table). */
static void report_exit(struct discover *d, size_t i)
{
	int pid = d->w[i].pid;

	watch_drop(d, i);
	d->reported++;
	if (d->on_exit)
		d->on_exit(d->ctx, pid);
}

/* ---- BPF mode ------------------------------------------------------------- */

static int on_sample(void *ctx, void *data, size_t size)
{
	struct discover *d = ctx;
	const struct dp_event *e = data;
	ssize_t i;

	if (size < sizeof(*e) || e->type != DP_EVENT_EXIT)
		return 0;
	i = watch_find(d, (int)e->pid);
	if (i < 0)
		return 0; /* unwatched since, or a duplicate */
	/* An exit from before this watch began: an earlier process with this pid. */
	if (e->ktime_ns < d->w[i].since_ns)
		return 0;
	report_exit(d, (size_t)i);
	return 0;
}

static void bpf_teardown(struct discover *d)
{
	ring_buffer__free(d->rb);
	d->rb = NULL;
	discover_bpf__destroy(d->skel);
	d->skel = NULL;
}

/* Load and attach; 0, or negative errno with `why` saying which step failed. */
static int bpf_setup(struct discover *d, char *why, size_t why_len)
{
	const char *problem = bpf_privilege_problem();
	const char *step, *msg;
	int err;

	if (problem) {
		snprintf(why, why_len, "%s", problem);
		return -EPERM;
	}
	if (access(KERNEL_BTF, R_OK) != 0) {
		snprintf(why, why_len, "no kernel BTF at %s", KERNEL_BTF);
		return -ENOENT;
	}
	problem = pidns_problem();
	if (problem) {
		snprintf(why, why_len, "%s", problem);
		return -EPERM;
	}

	libbpf_first[0] = libbpf_last[0] = '\0';
	d->prev_print = libbpf_set_print(quiet_print);
	d->print_set = true;

	step = "opening the BPF object";
	d->skel = discover_bpf__open();
	if (!d->skel) {
		err = -errno;
		goto fail;
	}
	step = "loading the BPF program";
	err = discover_bpf__load(d->skel);
	if (err)
		goto fail;
	step = "attaching to raw tracepoint sched_process_exit";
	err = discover_bpf__attach(d->skel);
	if (err)
		goto fail;
	step = "creating the ring buffer";
	d->rb = ring_buffer__new(bpf_map__fd(d->skel->maps.events), on_sample, d, NULL);
	if (!d->rb) {
		err = -errno;
		goto fail;
	}
	return 0;

fail:
	if (err >= 0)
		err = -EINVAL;
	msg = libbpf_first[0] ? libbpf_first : libbpf_last;
	if (msg[0])
		snprintf(why, why_len, "%s: %s; libbpf: %s", step, strerror(-err), msg);
	else
		snprintf(why, why_len, "%s: %s", step, strerror(-err));
	bpf_teardown(d);
	return err;
}

static int bpf_watch(struct discover *d, int pid)
{
	__u32 key = (__u32)pid;
	__u8 one = 1;
	int err;

	/*
	 * Into the map first, then check the process is alive. The exit event
	 * comes from the last thread's pass through the tracepoint. If that
	 * pass came before the insert, every thread already had PF_EXITING
	 * and the check refuses; if the check sees a thread without it, that
	 * thread's exit, and so the last pass, comes after the insert and
	 * finds the pid in the map. No exit falls in between. An event for a
	 * watch refused here finds no table entry and is ignored.
	 */
	err = watch_add(d, pid, -1, now_ns());
	if (err)
		return err;
	err = bpf_map__update_elem(d->skel->maps.watched, &key, sizeof(key), &one, sizeof(one), BPF_ANY);
	if (!err)
		err = bpf_target_alive(pid);
	if (err)
		watch_drop(d, d->n - 1);
	return err;
}

/*
 * A full ring buffer loses exit events: look at every watched pid then, so a
 * lost event delays a report instead of losing it.
 */
static void bpf_sweep(struct discover *d)
{
	for (size_t i = d->n; i-- > 0;) {
		if (i >= d->n) /* on_exit shrank the table */
			continue;
		if (bpf_target_alive(d->w[i].pid) == -ESRCH)
			report_exit(d, i);
	}
}

/* ---- pidfd fallback ------------------------------------------------------ */

static int pidfd_watch(struct discover *d, int pid)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = (uint32_t)pid };
	int fd = pidfd_open(pid);
	int err;

	if (fd < 0)
		return fd;
	if (pidfd_exited(fd)) {
		close(fd);
		return -ESRCH;
	}
	err = watch_add(d, pid, -1, now_ns());
	if (err) {
		close(fd);
		return err;
	}
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
		err = -errno;
		close(fd);
		d->n--;
		return err;
	}
	d->w[d->n - 1].pidfd = fd;
	return 0;
}

static int pidfd_consume(struct discover *d)
{
	struct epoll_event ev[64];
	/* Each full batch reports or skips 64 distinct pidfds: this many suffice. */
	int rounds = DP_MAX_WATCHED / 64 + 2;

	while (rounds-- > 0) {
		int k = epoll_wait(d->epfd, ev, 64, 0);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (int j = 0; j < k; j++) {
			ssize_t i = watch_find(d, (int)ev[j].data.u64);

			/* Recheck: on_exit may have unwatched or rewatched it. */
			if (i >= 0 && pidfd_exited(d->w[i].pidfd))
				report_exit(d, (size_t)i);
		}
		if (k < 64)
			break;
	}
	return 0;
}

/* ---- the API -------------------------------------------------------------- */

struct discover *discover_open(bool use_bpf, const char **note)
{
	static char note_buf[320];
	struct discover *d = calloc(1, sizeof(*d));
	char why[256];

	if (note)
		*note = NULL;
	if (!d)
		return NULL;
	d->epfd = -1;

	if (use_bpf && bpf_setup(d, why, sizeof(why)) != 0) {
		snprintf(note_buf, sizeof(note_buf), "BPF unavailable (%s): watching targets with pidfds", why);
		if (note)
			*note = note_buf;
	}
	if (!d->skel) {
		d->epfd = epoll_create1(EPOLL_CLOEXEC);
		if (d->epfd < 0) {
			int err = errno;

			discover_close(d);
			errno = err;
			return NULL;
		}
	}
	return d;
}

void discover_close(struct discover *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++)
		if (d->w[i].pidfd >= 0)
			close(d->w[i].pidfd);
	free(d->w);
	bpf_teardown(d);
	if (d->epfd >= 0)
		close(d->epfd);
	if (d->print_set)
		libbpf_set_print(d->prev_print);
	free(d);
}

bool discover_uses_bpf(const struct discover *d)
{
	return d && d->skel;
}

int discover_watch(struct discover *d, int pid)
{
	if (!d || pid <= 0)
		return -EINVAL;
	if (watch_find(d, pid) >= 0)
		return 0;
	return d->skel ? bpf_watch(d, pid) : pidfd_watch(d, pid);
}

void discover_unwatch(struct discover *d, int pid)
{
	ssize_t i = d ? watch_find(d, pid) : -1;

	if (i >= 0)
		watch_drop(d, (size_t)i);
}

int discover_fd(const struct discover *d)
{
	if (!d)
		return -EINVAL;
	return d->skel ? ring_buffer__epoll_fd(d->rb) : d->epfd;
}

int discover_consume(struct discover *d, void (*on_exit)(void *ctx, int pid), void *ctx)
{
	int err;

	if (!d)
		return -EINVAL;
	d->on_exit = on_exit;
	d->ctx = ctx;
	d->reported = 0;
	if (d->skel) {
		unsigned long long lost;

		err = ring_buffer__consume(d->rb);
		if (err > 0)
			err = 0;
		lost = discover_lost_events(d);
		if (!err && lost != d->lost_seen) {
			d->lost_seen = lost;
			bpf_sweep(d);
		}
	} else {
		err = pidfd_consume(d);
	}
	d->on_exit = NULL;
	d->ctx = NULL;
	return err ? err : d->reported;
}

unsigned long long discover_lost_events(const struct discover *d)
{
	if (!d || !d->skel || !d->skel->bss)
		return 0;
	return __atomic_load_n(&d->skel->bss->lost_events, __ATOMIC_RELAXED);
}
