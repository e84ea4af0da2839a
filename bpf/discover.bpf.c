// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * Kernel side of user/kernel/discover*.c: process events, in two modes.
 *
 *  - attach mode (track_all == false): only `dp_exit` is loaded; it reports
 *    the exit of the pids user space put in `watched`. The loader does not
 *    even load the other programs, so attach mode costs one hash lookup per
 *    exiting thread and nothing per syscall.
 *  - tracking mode (track_all == true): every process's fork, exec and exit,
 *    and the successful opens (and the closes) of the card nodes user space
 *    registered in `card_devs`, for the process model.
 *
 * All programs are raw tracepoints: they need no tracefs, which a fresh
 * machine may not have mounted (libbpf's attach of a plain tracepoint then
 * fails with ENOENT). They report through the one ring buffer `events` as
 * struct dp_event (include/dynprof/events.h); a failed reserve is counted
 * in `lost_events`.
 *
 * Portability floor: BPF_MAP_TYPE_RINGBUF (Linux 5.8); the helpers used here
 * are all older than that. Field offsets are CO-RE relocated at load time.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "dynprof/events.h"

/*
 * bpf_get_current_task() and bpf_probe_read_kernel() (what BPF_CORE_READ
 * expands to) are GPL-only helpers: the kernel refuses to load a program
 * using them unless its license is GPL-compatible. The project is MIT, so
 * this file is dual-licensed and says so in the form the kernel accepts
 * (license_is_gpl_compatible(): "Dual MIT/GPL").
 */
char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* ---- settings, set by user space before load ------------------------------ */

/* Report every process (tracking mode), not only watched exits. */
const volatile bool track_all = false;

/* ---- maps and globals shared with user space ------------------------------ */

/* Host tgids user space asked about: key tgid, value unused. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DP_MAX_WATCHED);
	__type(key, __u32);
	__type(value, __u8);
} watched SEC(".maps");

/*
 * Card nodes by device number -> card index, filled by user space
 * (discover_add_card). The open filter's only criterion.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DP_MAX_CARD_DEVS);
	__type(key, struct dp_card_dev);
	__type(value, __s32);
} card_devs SEC(".maps");

/*
 * Records of struct dp_event, cut after the last field their type uses
 * (events.h). DP_RINGBUF_BYTES is the default; the loader may resize the
 * map before load (bpf_map__set_max_entries).
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, DP_RINGBUF_BYTES);
} events SEC(".maps");

/* Events dropped because the ring buffer was full (read via skel->bss). */
__u64 lost_events = 0;

/* Internal to tracking mode. */

/*
 * The filename pointer of an open in flight, by host tid: saved at
 * sys_enter, read and zeroed at sys_exit (0: none in flight). A thread's
 * slot is reused in place, not deleted and re-inserted (that costs ~170 ns
 * per open in LRU bookkeeping), and goes when the thread exits. LRU: past
 * 16384 threads that have opened files, the least recently opening ones
 * lose their slot, never an insert fails.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} open_paths SEC(".maps");

/*
 * Processes (tgids) that may hold a card fd: those that opened a card, and
 * the children they forked (fork copies the fd table). close() of these
 * processes is checked against the card nodes; every other process's close
 * costs one lookup here. Entries go at exit. LRU: past 16384 card holders,
 * the oldest lose their close events (user space re-reads /proc/<pid>/fd).
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u8);
} card_pids SEC(".maps");

/* ---- helpers ------------------------------------------------------------------ */

#define S_IFMT 0170000
#define S_IFCHR 0020000
#define KDEV_MINORBITS 20 /* kernel dev_t: major << 20 | minor (kdev_t.h) */
#define KDEV_MINORMASK ((1U << KDEV_MINORBITS) - 1)

/*
 * Reserve a record of `size` bytes (a constant: DP_EVENT_HEAD_SIZE,
 * DP_EVENT_PATH_SIZE or sizeof(struct dp_event)) with its head zeroed and
 * type, pid and time set; ring buffer memory holds old records otherwise.
 */
static __always_inline struct dp_event *reserve_event(__u32 type, __u32 pid, __u32 size)
{
	struct dp_event *e = bpf_ringbuf_reserve(&events, size, 0);

	if (!e) {
		__sync_fetch_and_add(&lost_events, 1);
		return NULL;
	}
	__builtin_memset(e, 0, DP_EVENT_HEAD_SIZE);
	e->type = type;
	e->pid = pid;
	e->ktime_ns = bpf_ktime_get_ns();
	return e;
}

/*
 * Waking the reader costs more than making the event: an irq_work, then a
 * context switch into the reader, per event when the reader keeps up
 * (the ring buffer's default). Measured here, a fork+exec+exit loop ran
 * 15% slower with every lifecycle event waking the reader, 1-7% without
 * (2-core VM, noisy).
 * So events are either
 *  - urgent (card opens and closes; fork, exec, exit of card holders; exits
 *    of watched pids): wake the reader at once. Forced, since the default
 *    wakes only when the ring held nothing unread before this record;
 *  - quiet (fork, exec, exit of everybody else): wake nobody, unless the
 *    ring is a quarter full. They reach the reader with the next urgent
 *    event (the ring is read in order, so a card holder's history arrives
 *    before its card open) or at the reader's next timed read.
 */
static __always_inline void submit_event(struct dp_event *e, bool urgent)
{
	__u64 flags = BPF_RB_FORCE_WAKEUP;

	if (!urgent && bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) <
			       bpf_ringbuf_query(&events, BPF_RB_RING_SIZE) / 4)
		flags = BPF_RB_NO_WAKEUP;
	bpf_ringbuf_submit(e, flags);
}

/*
 * Who a process is: real parent, real uid (host), start time (the group
 * leader's: with the pid it names the process even across pid reuse, and
 * exec from a non-leader thread keeps it), comm, cgroup. For any task, not
 * only current (fork reports the child), hence CO-RE reads throughout; the
 * cgroup id is what bpf_get_current_cgroup_id() would give for that task.
 */
static __always_inline void fill_task(struct dp_event *e, struct task_struct *task)
{
	e->ppid = BPF_CORE_READ(task, real_parent, tgid);
	e->uid = BPF_CORE_READ(task, real_cred, uid.val);
	e->start_ns = BPF_CORE_READ(task, group_leader, start_boottime);
	e->cgroup_id = BPF_CORE_READ(task, cgroups, dfl_cgrp, kn, id);
	BPF_CORE_READ_STR_INTO(&e->comm, task, comm);
}

/*
 * The card index of the file at `fd` in task's fd table, or NULL when that
 * is not a registered card node (no such fd, not a character device, a
 * device not in card_devs). `dev` gets the device number.
 */
static __always_inline const __s32 *fd_card(struct task_struct *task, __u64 fd, struct dp_card_dev *dev)
{
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	struct file **fds, *file = NULL;
	struct inode *inode;
	__u32 rdev;
	__u16 mode;

	if (!fdt || fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	fds = BPF_CORE_READ(fdt, fd);
	if (bpf_probe_read_kernel(&file, sizeof(file), &fds[fd]) || !file)
		return NULL;
	inode = BPF_CORE_READ(file, f_inode);
	if (!inode)
		return NULL;
	mode = BPF_CORE_READ(inode, i_mode);
	if ((mode & S_IFMT) != S_IFCHR)
		return NULL;
	rdev = BPF_CORE_READ(inode, i_rdev);
	dev->major = rdev >> KDEV_MINORBITS;
	dev->minor = rdev & KDEV_MINORMASK;
	return bpf_map_lookup_elem(&card_devs, dev);
}

/* ---- exit --------------------------------------------------------------------- */

/*
 * sched_process_exit fires in do_exit() of every exiting *thread*, in that
 * thread's context, after it has set task->exit_code (the wait(2) status) and
 * decremented signal->live. What a target's watcher means by "the process
 * exited" is the whole thread group being gone, which is also what the pidfd
 * fallback reports (a pidfd polls readable once the group is empty).
 *
 * The obvious test, "the exiting thread is the group leader" (pid == tgid),
 * gets that wrong in two real cases:
 *  - the main thread calls pthread_exit() while other threads run on: the
 *    leader exits first and the process lives on (its pid stays valid);
 *  - a non-leader thread calls execve(): de_thread() kills the old leader,
 *    which passes here with pid == tgid, and the process carries on under
 *    the same pid with the new program.
 * and in exit_group() the leader is not necessarily the last thread out.
 * So the test is signal->live == 0 instead: the last thread of the group to
 * enter do_exit() sees it, whichever thread that is, on every kernel since
 * the ring buffer exists (6.16+ also passes it as the tracepoint's
 * group_dead argument, which a raw_tp program cannot rely on elsewhere).
 * Limits: two threads dying together may both read 0 after the last
 * decrement, so an exit can be reported twice (the map delete below makes it
 * rare for watched pids; user space drops the duplicate, in tracking mode
 * by pid + start_ns); exit_code is the last thread's, which for
 * exit()/exit_group() and fatal signals is the group's status.
 * Attach mode: threads of unwatched processes cost one hash lookup.
 * Tracking mode: every process's exit is reported, watched or not.
 */
SEC("raw_tp/sched_process_exit")
int dp_exit(void *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32;
	struct task_struct *task;
	struct dp_event *e;
	bool is_watched, held_cards = false;

	if (track_all) {
		__u32 tid = (__u32)pid_tgid;

		bpf_map_delete_elem(&open_paths, &tid); /* this thread's slot */
	}
	is_watched = bpf_map_lookup_elem(&watched, &tgid) != NULL;
	if (!is_watched && !track_all)
		return 0;

	task = (struct task_struct *)bpf_get_current_task();
	if (BPF_CORE_READ(task, signal, live.counter) != 0)
		return 0; /* other threads of the group are still alive */

	/* Once: a pid reused before user space catches up is not "watched". */
	if (is_watched)
		bpf_map_delete_elem(&watched, &tgid);
	if (track_all) /* its fds close with it */
		held_cards = bpf_map_delete_elem(&card_pids, &tgid) == 0;

	e = reserve_event(DP_EVENT_EXIT, tgid, DP_EVENT_HEAD_SIZE);
	if (!e)
		return 0;
	e->tid = (__u32)pid_tgid;
	e->exit_code = BPF_CORE_READ(task, exit_code);
	if (track_all)
		fill_task(e, task);
	submit_event(e, is_watched || held_cards);
	return 0;
}

/* ---- fork (tracking mode) ---------------------------------------------------- */

/*
 * sched_process_fork(parent, child) fires in kernel_clone() once the child
 * is complete (credentials, cgroup, start time, real parent set) and before
 * it first runs, in the context of the forking thread. New threads pass
 * here too (child->pid != child->tgid): skipped, the model is of processes.
 * ppid is the child's real parent, which differs from the forking process
 * for CLONE_PARENT; it is what /proc/<pid>/stat shows.
 */
SEC("raw_tp/sched_process_fork")
int BPF_PROG(dp_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 pid, tgid, parent_tgid;
	bool holder = false;
	struct dp_event *e;
	__u8 one = 1;

	if (!track_all)
		return 0;
	pid = BPF_CORE_READ(child, pid);
	tgid = BPF_CORE_READ(child, tgid);
	if (pid != tgid)
		return 0; /* a thread */

	/* The child inherits the parent's fds, card fds among them. */
	parent_tgid = BPF_CORE_READ(parent, tgid);
	if (bpf_map_lookup_elem(&card_pids, &parent_tgid)) {
		bpf_map_update_elem(&card_pids, &tgid, &one, BPF_ANY);
		holder = true;
	}

	e = reserve_event(DP_EVENT_FORK, tgid, DP_EVENT_HEAD_SIZE);
	if (!e)
		return 0;
	e->tid = BPF_CORE_READ(parent, pid);
	fill_task(e, child);
	submit_event(e, holder);
	return 0;
}

/* ---- exec (tracking mode) ---------------------------------------------------- */

/*
 * sched_process_exec(p, old_pid, bprm) fires once the new program is in
 * place (p == current, new mm with argv on its stack, new comm and creds),
 * before it runs. filename is the path as given to execve() (relative,
 * or /dev/fd/N for fexecve), a kernel string; argv is copied from the new
 * stack, NUL-separated, cut at DP_ARGS_LEN (args_len says how much came).
 * After an exec, fds opened O_CLOEXEC are gone without close() calls: user
 * space re-reads /proc/<pid>/fd of card holders on EXEC.
 */
SEC("raw_tp/sched_process_exec")
int BPF_PROG(dp_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	unsigned long arg_start, arg_end;
	struct mm_struct *mm;
	struct dp_event *e;
	__u32 tgid;
	__u64 len;

	if (!track_all)
		return 0;
	tgid = BPF_CORE_READ(p, tgid);
	e = reserve_event(DP_EVENT_EXEC, tgid, sizeof(*e));
	if (!e)
		return 0;
	e->tid = old_pid;
	fill_task(e, p);
	if (bpf_probe_read_kernel_str(e->path, sizeof(e->path), BPF_CORE_READ(bprm, filename)) < 0)
		e->path[0] = '\0';

	mm = BPF_CORE_READ(p, mm);
	arg_start = BPF_CORE_READ(mm, arg_start);
	arg_end = BPF_CORE_READ(mm, arg_end);
	len = arg_end > arg_start ? arg_end - arg_start : 0;
	if (len > DP_ARGS_LEN)
		len = DP_ARGS_LEN;
	/* On failure the helper zeroes the buffer. */
	if (bpf_probe_read_user(e->args, len, (const void *)arg_start) == 0)
		e->args_len = len;
	submit_event(e, bpf_map_lookup_elem(&card_pids, &tgid) != NULL);
	return 0;
}

/* ---- card opens and closes (tracking mode) ---------------------------------- */

/*
 * Two ways, one chosen at load (discover_bpf.c): the device permission check
 * (dp_dev, below), else the syscall tracepoints (dp_sys_enter/dp_sys_exit).
 *
 * The kernel filter: an open crosses to user space only when it succeeded
 * and the file it opened is a character device registered in card_devs.
 * Deciding by the opened file's device number, not by the path, catches
 * relative paths, symlinks, /proc/self/fd re-opens and nodes made with
 * mknod inside containers (any name, any mount); the path is reported as
 * given, for information.
 *
 * sys_enter (every syscall on the host): compare the syscall number first;
 * for an open, save the user filename pointer by tid (at entry its page
 * may not be resident yet, so bpf_probe_read_user_str can fail there;
 * the kernel has read it by the exit); for a close, see below.
 * sys_exit (every syscall): look up the saved pointer by tid, return at
 * once when there is none (that miss is the whole cost of a non-open
 * syscall); otherwise the returned fd leads to the file: task->files->fdt
 * ->fd[ret]->f_inode, S_ISCHR, i_rdev. On a card: a CARD_OPEN event with
 * the path read from the saved pointer (just read by the kernel, so
 * resident), and the process becomes a card holder.
 *
 * close(fd) of a card holder (and only of one: one lookup for anybody else)
 * looks at the file still at fd before the close; a card node gives a
 * CARD_CLOSE. Looking at the file rather than remembering (tgid, fd) pairs
 * also covers fds inherited from a parent or made by dup(), and cannot be
 * fooled by a pid or an fd number reused since.
 *
 * Not seen in the kernel (user space re-reads /proc/<pid>/fd instead: on
 * EXEC of card holders, and on CARD_CLOSE since another fd may still
 * hold the card): fds closed by exec (O_CLOEXEC), dup2/dup3 over a card
 * fd, close_range(), fds received over a unix socket or by pidfd_getfd(),
 * opens through io_uring, open_by_handle_at(); on x86, 32-bit (ia32)
 * processes are skipped (other syscall numbers), x32 ones are seen.
 * A thread racing to close or dup2 over the fd between the open's return
 * and sys_exit could make the program look at another file: the model's
 * /proc re-reads correct that.
 */
/* ---- card opens without a syscall hook: the device permission check ----------- */

/* include/uapi/linux/bpf.h (not in vmlinux.h): ctx->access_type = access << 16 | type. */
#define DEVCG_DEV_CHAR 2
#define DEVCG_ACC_READ DP_ACCESS_READ
#define DEVCG_ACC_WRITE DP_ACCESS_WRITE

/*
 * The preferred way to see card opens (user/kernel/discover_bpf.c attaches
 * it through a BPF link to the cgroup v2 root, so it runs for every task of
 * the host, and goes when dynprof's link fd closes, crash or SIGKILL
 * included). The kernel runs the device programs of the opener's cgroup
 * from inode_permission(), after the file-mode check passed and before the
 * driver's open: every other syscall costs nothing, a device check one
 * hash lookup.
 *
 * It ALWAYS returns 1 (allow): every device program of a cgroup runs and
 * any one returning 0 denies, so allowing changes no decision, a container
 * engine's device policy included.
 *
 * A check is not an open: the open may still fail after it (a driver's
 * open, an LSM), and access(2) passes here too. So the CARD_OPEN record it
 * sends has fd = DP_FD_UNCONFIRMED and no path: user space confirms it by
 * reading the process's fds (user/model/opencheck.c) before reporting a card
 * user. Only reads and writes of character devices are looked at (not
 * mknod, not block devices).
 */
SEC("cgroup/dev")
int dp_dev(struct bpf_cgroup_dev_ctx *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, access = ctx->access_type >> 16;
	struct dp_card_dev dev = { .major = ctx->major, .minor = ctx->minor };
	const __s32 *card;
	struct dp_event *e;
	__u8 one = 1;

	if (!track_all || (ctx->access_type & 0xffff) != DEVCG_DEV_CHAR ||
	    !(access & (DEVCG_ACC_READ | DEVCG_ACC_WRITE)))
		return 1;
	card = bpf_map_lookup_elem(&card_devs, &dev);
	if (!card)
		return 1; /* not a card node: the common case */

	/* May hold it soon: its fork, exec and exit wake the reader. */
	bpf_map_update_elem(&card_pids, &tgid, &one, BPF_ANY);
	e = reserve_event(DP_EVENT_CARD_OPEN, tgid, DP_EVENT_PATH_SIZE);
	if (!e)
		return 1;
	e->tid = (__u32)pid_tgid;
	e->fd = DP_FD_UNCONFIRMED;
	e->card = *card;
	e->rdev_major = dev.major;
	e->rdev_minor = dev.minor;
	e->access = access;
	fill_task(e, (struct task_struct *)bpf_get_current_task());
	e->path[0] = '\0';
	submit_event(e, true);
	return 1;
}

/* ---- card opens and closes with syscall hooks (the fallback) ------------------ */

#if defined(__TARGET_ARCH_x86)
#define NR_OPEN 2
#define NR_CLOSE 3
#define NR_OPENAT 257
#define NR_OPENAT2 437
#define X32_SYSCALL_BIT 0x40000000UL
#define TS_COMPAT 0x0002 /* thread_info.status: in an ia32 syscall */
#elif defined(__TARGET_ARCH_arm64)
#define NR_OPEN (-1) /* arm64 has no open(2) */
#define NR_CLOSE 57
#define NR_OPENAT 56
#define NR_OPENAT2 437
#else
#error "bpf/discover.bpf.c: syscall numbers for this architecture are missing"
#endif

/* Syscalls of a 32-bit (ia32) process use another table: not ours. */
static __always_inline bool in_compat_syscall(void)
{
#if defined(__TARGET_ARCH_x86)
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();

	if (bpf_core_field_exists(task->thread_info.status))
		return BPF_CORE_READ(task, thread_info.status) & TS_COMPAT;
#endif
	return false;
}

static __always_inline int on_close(__u64 fd)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct dp_card_dev dev = {};
	const __s32 *card;
	struct dp_event *e;

	if (!bpf_map_lookup_elem(&card_pids, &tgid))
		return 0; /* not a card holder: the common case */
	if (in_compat_syscall())
		return 0; /* ia32: not close(2) */
	card = fd_card((struct task_struct *)bpf_get_current_task(), fd, &dev);
	if (!card)
		return 0;
	e = reserve_event(DP_EVENT_CARD_CLOSE, tgid, DP_EVENT_HEAD_SIZE);
	if (!e)
		return 0;
	e->tid = (__u32)bpf_get_current_pid_tgid();
	e->fd = (__s32)fd;
	e->card = *card;
	e->rdev_major = dev.major;
	e->rdev_minor = dev.minor;
	fill_task(e, (struct task_struct *)bpf_get_current_task());
	submit_event(e, true);
	return 0;
}

SEC("raw_tp/sys_enter")
int dp_sys_enter(struct bpf_raw_tracepoint_args *ctx)
{
	unsigned long id = ctx->args[1];
	struct pt_regs *regs;
	__u64 path, *saved;
	__u32 tid;

#if defined(__TARGET_ARCH_x86)
	id &= ~X32_SYSCALL_BIT;
#endif
	if (id != NR_OPENAT && id != NR_CLOSE && id != NR_OPEN && id != NR_OPENAT2)
		return 0;
	if (!track_all)
		return 0;

	/* The syscall's own registers: on x86 the arguments are di, si, dx, r10. */
	regs = (struct pt_regs *)ctx->args[0];
	if (id == NR_CLOSE)
		return on_close(PT_REGS_PARM1_CORE_SYSCALL(regs));
	/* open(path, ...); openat(dirfd, path, ...); openat2(dirfd, path, how, size) */
	if (id == NR_OPEN)
		path = PT_REGS_PARM1_CORE_SYSCALL(regs);
	else
		path = PT_REGS_PARM2_CORE_SYSCALL(regs);
	/* The thread's slot is reused in place: no allocation per open. */
	tid = (__u32)bpf_get_current_pid_tgid();
	saved = bpf_map_lookup_elem(&open_paths, &tid);
	if (saved)
		*saved = path;
	else
		bpf_map_update_elem(&open_paths, &tid, &path, BPF_ANY);
	return 0;
}

SEC("raw_tp/sys_exit")
int dp_sys_exit(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid, tgid = pid_tgid >> 32;
	struct dp_card_dev dev = {};
	struct task_struct *task;
	const __s32 *card;
	struct dp_event *e;
	__u64 *saved, path;
	long ret;
	__u8 one = 1;

	saved = bpf_map_lookup_elem(&open_paths, &tid);
	if (!saved || !*saved)
		return 0; /* not an open: the cheap path */
	path = *saved;
	*saved = 0;

	ret = (long)ctx->args[1];
	if (ret < 0)
		return 0; /* the open failed */
	task = (struct task_struct *)bpf_get_current_task();
	card = fd_card(task, ret, &dev);
	if (!card || in_compat_syscall())
		return 0; /* not a card node (or not an open: ia32 numbers) */

	bpf_map_update_elem(&card_pids, &tgid, &one, BPF_ANY);
	e = reserve_event(DP_EVENT_CARD_OPEN, tgid, DP_EVENT_PATH_SIZE);
	if (!e)
		return 0;
	e->tid = tid;
	e->fd = (__s32)ret;
	e->card = *card;
	e->rdev_major = dev.major;
	e->rdev_minor = dev.minor;
	fill_task(e, task);
	if (bpf_probe_read_user_str(e->path, sizeof(e->path), (const void *)path) < 0)
		e->path[0] = '\0';
	submit_event(e, true);
	return 0;
}
