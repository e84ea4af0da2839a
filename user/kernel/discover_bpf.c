// SPDX-License-Identifier: MIT
/*
 * discover's BPF back end: checks that BPF can be used here, loads and
 * attaches bpf/discover.bpf.c (the process programs and one way of seeing
 * card opens in tracking mode, only the exit program in attach mode), and
 * turns ring buffer records into watched-pid exits (discover_consume) or
 * whole events (discover_consume_events).
 *
 * Card opens, in this order (tracking mode):
 *  1. the device permission check (dp_dev, cgroup/dev) through a BPF link on
 *     the cgroup v2 root (kernel/cgroot.c): costs nothing per syscall;
 *  2. the syscall tracepoints (dp_sys_enter, dp_sys_exit), when 1 cannot
 *     load or attach, or when DYNPROF_OPEN_HOOK=syscalls asks for them.
 * Only the chosen programs are loaded; discover_open_hook() says which.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "bpf/discover.skel.h"
#include "kernel/bpfutil.h"
#include "kernel/cgroot.h"
#include "kernel/discover_impl.h"
#include "common/procstat.h"
#include "kernel/pidfd.h"
#include "kernel/watchset.h"
#include "dynprof/events.h"

#ifndef PF_EXITING
#define PF_EXITING 0x00000004 /* include/linux/sched.h, stable since 2.6 */
#endif

/* Map sizes in attach mode, where only `watched` and `events` are used. */
#define UNUSED_MAP_ENTRIES 1

_Static_assert(DP_RINGBUF_BYTES >= 4096 && (DP_RINGBUF_BYTES & (DP_RINGBUF_BYTES - 1)) == 0,
	       "DP_RINGBUF_BYTES: a power of 2, at least a page");

/* Forces the syscall tracepoints for card opens (tests, benchmarks). */
#define OPEN_HOOK_ENV "DYNPROF_OPEN_HOOK"

struct discover_be {
	bool tracking;       /* all programs loaded, events delivered whole */
	bool dev_hook;       /* card opens from dp_dev (else the syscall hooks) */
	char hook_note[320]; /* tracking mode: "card opens: ..." */
	struct discover_bpf *skel;
	struct ring_buffer *rb;
	struct watchset set; /* the pids in the `watched` map; no fds */
	unsigned long long lost_seen;
	/* Set for the duration of be_consume. */
	void (*on_exit)(void *ctx, int pid);
	void *ctx;
	int reported;
	/* Set for the duration of be_consume_events. */
	void (*on_event)(void *ctx, const struct dp_event *e);
	void *ev_ctx;
	int delivered;
};

/* ---- is a watched pid still to be seen exiting? ----------------------------- */

/*
 * True when every thread of pid is inside do_exit(): PF_EXITING (in the
 * flags field of /proc/<pid>/task/<tid>/stat) is set before the exit
 * tracepoint runs. False when some thread is not, or when /proc cannot say.
 */
static bool group_exiting(int pid)
{
	char path[64];
	struct dirent *de;
	bool exiting = true;
	int budget = 1 << 16; /* threads */
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return false;
	while (exiting && budget-- > 0 && (de = readdir(dir))) {
		struct procstat st;
		int err;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.20s/stat", pid, de->d_name);
		err = procstat_read(path, &st);
		if (err == -ESRCH)
			continue; /* the thread is gone */
		if (err) {
			exiting = false; /* cannot tell: assume it lives */
			break;
		}
		if (st.state != 'Z' && st.state != 'X' && !(st.flags & PF_EXITING))
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
static int target_alive(int pid)
{
	int fd = pidfd_of(pid);
	int err;

	if (fd < 0)
		return fd;
	err = group_exiting(pid) || pidfd_exited(fd) ? -ESRCH : 0;
	close(fd);
	return err;
}

/* ---- the watched pids --------------------------------------------------------- */

/* Stop watching entry i: out of the kernel map, then the table. */
static void drop(struct discover_be *be, size_t i)
{
	__u32 key = (__u32)be->set.w[i].pid;

	/* -ENOENT when the program already deleted it at the exit. */
	bpf_map__delete_elem(be->skel->maps.watched, &key, sizeof(key), 0);
	watchset_remove(&be->set, i);
}

/* Entry i exited: drop it, then tell the caller (who may change the table). */
static void report_exit(struct discover_be *be, size_t i)
{
	int pid = be->set.w[i].pid;

	drop(be, i);
	be->reported++;
	if (be->on_exit)
		be->on_exit(be->ctx, pid);
}

/* ---- ring buffer records ---------------------------------------------------- */

/* Attach mode: an exit of a watched pid. */
static void watched_exit(struct discover_be *be, const struct dp_event *e)
{
	ssize_t i;

	if (e->type != DP_EVENT_EXIT)
		return;
	i = watchset_find(&be->set, (int)e->pid);
	if (i < 0)
		return; /* unwatched since, or a duplicate */
	/* An exit from before this watch began: an earlier process with this pid. */
	if (e->ktime_ns < be->set.w[i].since_ns)
		return;
	report_exit(be, (size_t)i);
}

/* Shortest record per type: what the BPF side reserves (events.h). */
static size_t record_size(uint32_t type)
{
	switch (type) {
	case DP_EVENT_EXEC:
		return sizeof(struct dp_event);
	case DP_EVENT_CARD_OPEN:
		return DP_EVENT_PATH_SIZE;
	default:
		return DP_EVENT_HEAD_SIZE;
	}
}

static int on_sample(void *ctx, void *data, size_t size)
{
	struct discover_be *be = ctx;
	struct dp_event e;

	if (size < DP_EVENT_HEAD_SIZE)
		return 0;
	/* Records are cut after their last used field: pad to the whole struct. */
	memset(&e, 0, sizeof(e));
	memcpy(&e, data, size < sizeof(e) ? size : sizeof(e));
	if (size < record_size(e.type))
		return 0; /* not what this program sends */
	e.path[sizeof(e.path) - 1] = '\0';
	e.comm[sizeof(e.comm) - 1] = '\0';
	if (e.args_len > sizeof(e.args))
		e.args_len = sizeof(e.args);

	if (be->on_event) {
		be->delivered++;
		be->on_event(be->ev_ctx, &e);
		/* A watched pid's exit is delivered above; its watch ends. */
		if (e.type == DP_EVENT_EXIT) {
			ssize_t i = watchset_find(&be->set, (int)e.pid);

			if (i >= 0 && e.ktime_ns >= be->set.w[i].since_ns)
				drop(be, (size_t)i);
		}
		return 0;
	}
	watched_exit(be, &e);
	return 0;
}

/* ---- loading ------------------------------------------------------------------ */

/* What be_open made, in reverse, and the hold of libbpf's message capture. */
static void be_close(struct discover_be *be)
{
	ring_buffer__free(be->rb);
	discover_bpf__destroy(be->skel);
	watchset_free(&be->set);
	free(be);
	bpfutil_quiet_release();
}

/*
 * Settings before load. Attach mode loads only dp_exit, and shrinks the
 * maps only tracking mode uses (an LRU hash preallocates all its entries).
 * Tracking mode loads one of the two ways of seeing card opens; the device
 * hook needs no open_paths (one entry: an LRU map cannot have none).
 */
static int configure(struct discover_be *be, bool dev_hook)
{
	struct discover_bpf *s = be->skel;
	int err;

	s->rodata->track_all = be->tracking;
	err = bpf_map__set_max_entries(s->maps.events, DP_RINGBUF_BYTES);
	if (err)
		return err;
	bpf_program__set_autoload(s->progs.dp_dev, be->tracking && dev_hook);
	bpf_program__set_autoload(s->progs.dp_sys_enter, be->tracking && !dev_hook);
	bpf_program__set_autoload(s->progs.dp_sys_exit, be->tracking && !dev_hook);
	if (be->tracking)
		return dev_hook ? bpf_map__set_max_entries(s->maps.open_paths, UNUSED_MAP_ENTRIES) : 0;
	bpf_program__set_autoload(s->progs.dp_fork, false);
	bpf_program__set_autoload(s->progs.dp_exec, false);
	err = bpf_map__set_max_entries(s->maps.open_paths, UNUSED_MAP_ENTRIES);
	if (!err)
		err = bpf_map__set_max_entries(s->maps.card_pids, UNUSED_MAP_ENTRIES);
	if (!err)
		err = bpf_map__set_max_entries(s->maps.card_devs, UNUSED_MAP_ENTRIES);
	return err;
}

/*
 * dp_dev on the cgroup v2 root, through a link: the skeleton's link, so
 * it goes with the skeleton, and with the process however it ends. The
 * link holds the cgroup; the fd (and a private mount) are not kept.
 */
static int attach_dev_hook(struct discover_be *be, const char **step, char *why, size_t why_len)
{
	struct bpf_link *link;
	int cg, err;

	*step = "opening the cgroup v2 root";
	cg = cgroot_open(why, why_len);
	if (cg < 0)
		return cg;
	*step = "attaching to the cgroup v2 root (cgroup/dev, BPF link)";
	link = bpf_program__attach_cgroup(be->skel->progs.dp_dev, cg);
	err = link ? 0 : -errno;
	close(cg);
	if (err) {
		why[0] = '\0';
		return err;
	}
	be->skel->links.dp_dev = link;
	return 0;
}

/* One try: open, configure, load, attach. Negative errno with `why` set; the skeleton freed. */
static int load(struct discover_be *be, bool dev_hook, char *why, size_t why_len)
{
	const char *step;
	int err;

	bpfutil_quiet_reset();
	why[0] = '\0';
	step = "opening the BPF object";
	be->skel = discover_bpf__open();
	if (!be->skel) {
		err = -errno;
		goto fail;
	}
	step = "configuring the BPF object";
	err = configure(be, dev_hook);
	if (err)
		goto fail;
	step = "loading the BPF programs";
	err = discover_bpf__load(be->skel);
	if (err)
		goto fail;
	step = !be->tracking ? "attaching to raw tracepoint sched_process_exit" :
	       dev_hook      ? "attaching to raw tracepoints sched_process_{fork,exec,exit}" :
			       "attaching to raw tracepoints sched_process_{fork,exec,exit}, "
			       "sys_{enter,exit}";
	err = discover_bpf__attach(be->skel);
	if (!err && dev_hook)
		err = attach_dev_hook(be, &step, why, why_len);
	if (err)
		goto fail;
	be->dev_hook = dev_hook;
	return 0;

fail:
	if (err >= 0)
		err = -EINVAL;
	if (!why[0])
		bpfutil_failure(why, why_len, step, err);
	else if (strlen(step) + 2 < why_len) { /* cgroot's own reason: after the step */
		char tmp[256];

		snprintf(tmp, sizeof(tmp), "%s", why);
		snprintf(why, why_len, "%s: %s", step, tmp);
	}
	discover_bpf__destroy(be->skel);
	be->skel = NULL;
	return err;
}

/*
 * Tracking mode: the device hook, else the syscall hooks (see the top of
 * the file), said in hook_note. A failure of both is the second's.
 */
static int load_tracking(struct discover_be *be, char *why, size_t why_len)
{
	const char *env = getenv(OPEN_HOOK_ENV);
	char hook_why[256];
	int err;

	if (env && strcmp(env, "syscalls") == 0) {
		snprintf(hook_why, sizeof(hook_why), "not tried: %s=syscalls", OPEN_HOOK_ENV);
	} else {
		err = load(be, true, hook_why, sizeof(hook_why));
		if (!err) {
			snprintf(be->hook_note, sizeof(be->hook_note), "card opens: cgroup device hook");
			return 0;
		}
	}
	err = load(be, false, why, why_len);
	if (!err)
		snprintf(be->hook_note, sizeof(be->hook_note),
			 "card opens: syscall tracepoints (cgroup device hook: %s)", hook_why);
	return err;
}

/*
 * Load and attach; 0, or negative errno with `why` saying which step
 * failed. libbpf's messages go to the capture from the load on, until
 * be_close (or the failure).
 */
static int be_open(struct discover_be **out, bool tracking, char *why, size_t why_len)
{
	struct discover_be *be;
	int err;

	err = bpfutil_usable(why, why_len);
	if (err)
		return err;
	be = calloc(1, sizeof(*be));
	if (!be) {
		snprintf(why, why_len, "out of memory");
		return -ENOMEM;
	}
	be->tracking = tracking;
	bpfutil_quiet_hold();
	err = tracking ? load_tracking(be, why, why_len) : load(be, false, why, why_len);
	if (err)
		goto fail;
	be->rb = ring_buffer__new(bpf_map__fd(be->skel->maps.events), on_sample, be, NULL);
	if (!be->rb) {
		err = -errno;
		bpfutil_failure(why, why_len, "creating the ring buffer", err);
		goto fail;
	}
	*out = be;
	return 0;

fail:
	be_close(be);
	return err;
}

static const char *be_hook(const struct discover_be *be, bool *closes)
{
	*closes = be->tracking && !be->dev_hook;
	return be->hook_note[0] ? be->hook_note : NULL;
}

/* ---- watching, consuming, cards --------------------------------------------------- */

static int be_watch(struct discover_be *be, int pid)
{
	__u32 key = (__u32)pid;
	__u8 one = 1;
	int err;

	if (watchset_find(&be->set, pid) >= 0)
		return 0;

	/*
	 * Into the map first, then check the process is alive. The exit event
	 * comes from the last thread's pass through the tracepoint. If that
	 * pass came before the insert, every thread already had PF_EXITING
	 * and the check refuses; if the check sees a thread without it, that
	 * thread's exit, and so the last pass, comes after the insert and
	 * finds the pid in the map. No exit falls in between. An event for a
	 * watch refused here finds no table entry and is ignored.
	 */
	err = watchset_add(&be->set, pid, -1);
	if (err)
		return err;
	err = bpf_map__update_elem(be->skel->maps.watched, &key, sizeof(key), &one, sizeof(one), BPF_ANY);
	if (!err)
		err = target_alive(pid);
	if (err)
		drop(be, be->set.n - 1);
	return err;
}

static void be_unwatch(struct discover_be *be, int pid)
{
	ssize_t i = watchset_find(&be->set, pid);

	if (i >= 0)
		drop(be, (size_t)i);
}

/*
 * A full ring buffer loses exit events: look at every watched pid then, so a
 * lost event delays a report instead of losing it.
 */
static void sweep(struct discover_be *be)
{
	for (size_t i = be->set.n; i-- > 0;) {
		if (i >= be->set.n) /* on_exit shrank the table */
			continue;
		if (target_alive(be->set.w[i].pid) == -ESRCH)
			report_exit(be, i);
	}
}

/* Events the BPF side could not reserve room for. */
static unsigned long long be_lost(const struct discover_be *be)
{
	if (!be->skel->bss)
		return 0;
	return __atomic_load_n(&be->skel->bss->lost_events, __ATOMIC_RELAXED);
}

/*
 * Drain the ring buffer into on_sample. For discover_consume, a grown loss
 * count sweeps the watched pids; discover_consume_events leaves the
 * rescan to its caller.
 */
static int drain(struct discover_be *be)
{
	unsigned long long lost;
	int err = ring_buffer__consume(be->rb);

	if (err < 0)
		return err;
	if (be->on_event)
		return 0;
	lost = be_lost(be);
	if (lost != be->lost_seen) {
		be->lost_seen = lost;
		sweep(be);
	}
	return 0;
}

static int be_consume(struct discover_be *be, void (*on_exit)(void *ctx, int pid), void *ctx)
{
	int err;

	be->on_exit = on_exit;
	be->ctx = ctx;
	be->reported = 0;
	err = drain(be);
	be->on_exit = NULL;
	be->ctx = NULL;
	return err ? err : be->reported;
}

static int be_consume_events(struct discover_be *be,
			     void (*on_event)(void *ctx, const struct dp_event *e), void *ctx)
{
	int err;

	be->on_event = on_event;
	be->ev_ctx = ctx;
	be->delivered = 0;
	err = drain(be);
	be->on_event = NULL;
	be->ev_ctx = NULL;
	return err ? err : be->delivered;
}

static int be_add_card(struct discover_be *be, unsigned major, unsigned minor, int index)
{
	struct dp_card_dev key = { .major = major, .minor = minor };
	__s32 value = index;
	int err;

	err = bpf_map__update_elem(be->skel->maps.card_devs, &key, sizeof(key), &value,
				   sizeof(value), BPF_ANY);
	return err == -E2BIG ? -ENOSPC : err;
}

static int be_fd(const struct discover_be *be)
{
	return ring_buffer__epoll_fd(be->rb);
}

const struct discover_ops discover_bpf_ops = {
	.open = be_open,
	.close = be_close,
	.watch = be_watch,
	.unwatch = be_unwatch,
	.fd = be_fd,
	.consume = be_consume,
	.consume_events = be_consume_events,
	.add_card = be_add_card,
	.lost = be_lost,
	.hook = be_hook,
};
