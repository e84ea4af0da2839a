// SPDX-License-Identifier: MIT
/*
 * discover's BPF back end: checks that BPF can be used here, loads and
 * attaches bpf/discover.bpf.c (all programs in tracking mode, only the exit
 * program in attach mode), and turns ring buffer records into watched-pid
 * exits (discover_consume) or whole events (discover_consume_events).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "bpf/discover.skel.h"
#include "kernel/bpfutil.h"
#include "common/procstat.h"
#include "kernel/discover_impl.h"
#include "shared/clock.h"
#include "dynprof/events.h"

#ifndef PF_EXITING
#define PF_EXITING 0x00000004 /* include/linux/sched.h, stable since 2.6 */
#endif

/* Map sizes in attach mode, where only `watched` and `events` are used. */
#define UNUSED_MAP_ENTRIES 1

_Static_assert(DP_RINGBUF_BYTES >= 4096 && (DP_RINGBUF_BYTES & (DP_RINGBUF_BYTES - 1)) == 0,
	       "DP_RINGBUF_BYTES: a power of 2, at least a page");

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
	int fd = discover_pidfd_open(pid);
	int err;

	if (fd < 0)
		return fd;
	err = group_exiting(pid) || discover_pidfd_exited(fd) ? -ESRCH : 0;
	close(fd);
	return err;
}

/* ---- ring buffer records ---------------------------------------------------- */

/* Attach mode: an exit of a watched pid. */
static void watched_exit(struct discover *d, const struct dp_event *e)
{
	ssize_t i;

	if (e->type != DP_EVENT_EXIT)
		return;
	i = discover_watch_find(d, (int)e->pid);
	if (i < 0)
		return; /* unwatched since, or a duplicate */
	/* An exit from before this watch began: an earlier process with this pid. */
	if (e->ktime_ns < d->w[i].since_ns)
		return;
	discover_report_exit(d, (size_t)i);
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
	struct discover *d = ctx;
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

	if (d->on_event) {
		d->delivered++;
		d->on_event(d->ev_ctx, &e);
		/* A watched pid's exit is delivered above; its watch ends. */
		if (e.type == DP_EVENT_EXIT) {
			ssize_t i = discover_watch_find(d, (int)e.pid);

			if (i >= 0 && e.ktime_ns >= d->w[i].since_ns)
				discover_watch_drop(d, (size_t)i);
		}
		return 0;
	}
	watched_exit(d, &e);
	return 0;
}

/* ---- loading ------------------------------------------------------------------ */

void discover_bpf_teardown(struct discover *d)
{
	ring_buffer__free(d->rb);
	d->rb = NULL;
	discover_bpf__destroy(d->skel);
	d->skel = NULL;
}

/*
 * Settings before load. Attach mode loads only dp_exit, and shrinks the
 * maps only tracking mode uses (an LRU hash preallocates all its entries).
 */
static int configure(struct discover *d)
{
	struct discover_bpf *s = d->skel;
	int err;

	s->rodata->track_all = d->tracking;
	err = bpf_map__set_max_entries(s->maps.events, DP_RINGBUF_BYTES);
	if (err || d->tracking)
		return err;
	bpf_program__set_autoload(s->progs.dp_fork, false);
	bpf_program__set_autoload(s->progs.dp_exec, false);
	bpf_program__set_autoload(s->progs.dp_sys_enter, false);
	bpf_program__set_autoload(s->progs.dp_sys_exit, false);
	err = bpf_map__set_max_entries(s->maps.open_paths, UNUSED_MAP_ENTRIES);
	if (!err)
		err = bpf_map__set_max_entries(s->maps.card_pids, UNUSED_MAP_ENTRIES);
	if (!err)
		err = bpf_map__set_max_entries(s->maps.card_devs, UNUSED_MAP_ENTRIES);
	return err;
}

/* Load and attach; 0, or negative errno with `why` saying which step failed. */
int discover_bpf_setup(struct discover *d, char *why, size_t why_len)
{
	const char *step;
	int err;

	err = bpfutil_usable(why, why_len);
	if (err)
		return err;

	bpfutil_quiet_reset();
	if (!d->print_set) {
		bpfutil_quiet_hold();
		d->print_set = true;
	}

	step = "opening the BPF object";
	d->skel = discover_bpf__open();
	if (!d->skel) {
		err = -errno;
		goto fail;
	}
	step = "configuring the BPF object";
	err = configure(d);
	if (err)
		goto fail;
	step = "loading the BPF programs";
	err = discover_bpf__load(d->skel);
	if (err)
		goto fail;
	step = d->tracking ? "attaching to raw tracepoints sched_process_{fork,exec,exit}, sys_{enter,exit}"
			   : "attaching to raw tracepoint sched_process_exit";
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
	bpfutil_failure(why, why_len, step, err);
	discover_bpf_teardown(d);
	return err;
}

/* ---- watching, consuming, cards --------------------------------------------------- */

int discover_bpf_watch(struct discover *d, int pid)
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
	err = discover_watch_add(d, pid, -1, clock_mono_ns());
	if (err)
		return err;
	err = bpf_map__update_elem(d->skel->maps.watched, &key, sizeof(key), &one, sizeof(one), BPF_ANY);
	if (!err)
		err = target_alive(pid);
	if (err)
		discover_watch_drop(d, d->n - 1);
	return err;
}

void discover_bpf_unwatch(struct discover *d, int pid)
{
	__u32 key = (__u32)pid;

	/* -ENOENT when the program already deleted it at the exit. */
	bpf_map__delete_elem(d->skel->maps.watched, &key, sizeof(key), 0);
}

/*
 * A full ring buffer loses exit events: look at every watched pid then, so a
 * lost event delays a report instead of losing it.
 */
static void sweep(struct discover *d)
{
	for (size_t i = d->n; i-- > 0;) {
		if (i >= d->n) /* on_exit shrank the table */
			continue;
		if (target_alive(d->w[i].pid) == -ESRCH)
			discover_report_exit(d, i);
	}
}

/*
 * Drain the ring buffer into on_sample. For discover_consume, a grown loss
 * count sweeps the watched pids; discover_consume_events leaves the
 * rescan to its caller.
 */
int discover_bpf_consume(struct discover *d)
{
	unsigned long long lost;
	int err = ring_buffer__consume(d->rb);

	if (err < 0)
		return err;
	if (d->on_event)
		return 0;
	lost = discover_bpf_lost(d);
	if (lost != d->lost_seen) {
		d->lost_seen = lost;
		sweep(d);
	}
	return 0;
}

int discover_bpf_add_card(struct discover *d, unsigned major, unsigned minor, int index)
{
	struct dp_card_dev key = { .major = major, .minor = minor };
	__s32 value = index;
	int err;

	err = bpf_map__update_elem(d->skel->maps.card_devs, &key, sizeof(key), &value, sizeof(value), BPF_ANY);
	return err == -E2BIG ? -ENOSPC : err;
}

int discover_bpf_fd(const struct discover *d)
{
	return ring_buffer__epoll_fd(d->rb);
}

unsigned long long discover_bpf_lost(const struct discover *d)
{
	if (!d->skel || !d->skel->bss)
		return 0;
	return __atomic_load_n(&d->skel->bss->lost_events, __ATOMIC_RELAXED);
}
