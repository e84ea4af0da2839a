/* SPDX-License-Identifier: MIT */
/*
 * Events the BPF programs send to user space: defined once, included by
 * bpf/<concern>.bpf.c (with vmlinux.h) and by user/<file>.c (with <stdint.h>).
 */
#ifndef DYNPROF_EVENTS_H
#define DYNPROF_EVENTS_H

#ifndef __VMLINUX_H__
#include <stdint.h>
typedef uint32_t __dp_u32;
typedef int32_t __dp_s32;
typedef uint64_t __dp_u64;
#else
typedef __u32 __dp_u32;
typedef __s32 __dp_s32;
typedef __u64 __dp_u64;
#endif

enum dp_event_type {
	DP_EVENT_EXIT = 1,       /* a process (thread group) exited */
	DP_EVENT_FORK = 2,       /* a new process (not a thread) was created */
	DP_EVENT_EXEC = 3,       /* a process exec'd a binary */
	DP_EVENT_CARD_OPEN = 4,  /* a process opened a card node (succeeded; or, with
				    fd == DP_FD_UNCONFIRMED, was allowed to: see below) */
	DP_EVENT_CARD_CLOSE = 5, /* a process closed an fd on a card node */
};

/*
 * A CARD_OPEN from the device permission check (bpf/discover.bpf.c dp_dev)
 * comes before the open is done and may be followed by its failure: its fd
 * is DP_FD_UNCONFIRMED, its path empty, and `access` says what was asked.
 * User space reports it only once the process's fds show the card.
 */
#define DP_FD_UNCONFIRMED (-2) /* not -1, which older producers use for "no fd" */
#define DP_ACCESS_READ 2       /* BPF_DEVCG_ACC_READ */
#define DP_ACCESS_WRITE 4      /* BPF_DEVCG_ACC_WRITE */

#define DP_PATH_LEN 256 /* exec filename / opened path, NUL-terminated, may be cut */
#define DP_ARGS_LEN 256 /* exec argv, NUL-separated, may be cut */
#define DP_COMM_LEN 16

struct dp_event {
	__dp_u32 type;       /* enum dp_event_type */
	__dp_u32 pid;        /* host tgid */
	__dp_u32 tid;        /* host tid that caused it (EXEC: the exec'ing thread's old tid) */
	__dp_u32 ppid;       /* real parent tgid (FORK: the new process's, as /proc shows it) */
	__dp_u32 uid;        /* real uid (host) */
	__dp_s32 exit_code;  /* EXIT: as wait(2) encodes it */
	__dp_s32 fd;         /* CARD_OPEN/CLOSE: the fd */
	__dp_s32 card;       /* CARD_OPEN/CLOSE: card index (from the card map) */
	__dp_u32 rdev_major; /* CARD_OPEN/CLOSE: the node's device number */
	__dp_u32 rdev_minor;
	__dp_u32 args_len;  /* EXEC: bytes used in args */
	__dp_u32 access;    /* CARD_OPEN unconfirmed: the check's access, DP_ACCESS_* bits */
	__dp_u64 start_ns;  /* task start_boottime (ns): identity with pid */
	__dp_u64 ktime_ns;  /* bpf_ktime_get_ns() at the event */
	__dp_u64 cgroup_id; /* bpf_get_current_cgroup_id() */
	char comm[DP_COMM_LEN];
	char path[DP_PATH_LEN]; /* EXEC: filename; CARD_OPEN: path as passed to open */
	char args[DP_ARGS_LEN]; /* EXEC: argv */
};

/*
 * In the ring buffer a record carries only the fields its type uses: FORK,
 * EXIT and CARD_CLOSE records end at `path`, CARD_OPEN records at `args`,
 * EXEC records are whole (a fork storm then fills the ring 6x slower).
 * user/kernel/discover_bpf.c delivers every event as a whole struct, the rest zeroed.
 */
#define DP_EVENT_HEAD_SIZE __builtin_offsetof(struct dp_event, path)
#define DP_EVENT_PATH_SIZE __builtin_offsetof(struct dp_event, args)

/*
 * Ring buffer bytes (a power of 2, a multiple of the page size): the BPF
 * object's default; the loader sets what it was compiled with, so a test
 * build with -DDP_RINGBUF_BYTES=4096 forces losses. 1 MiB holds ~10000
 * fork or exit records, ~1700 exec records.
 */
#ifndef DP_RINGBUF_BYTES
#define DP_RINGBUF_BYTES (1024 * 1024)
#endif

/* A card node, as the kernel filter knows it: key of the `card_devs` map. */
struct dp_card_dev {
	__dp_u32 major;
	__dp_u32 minor;
};

#define DP_MAX_WATCHED 4096
#define DP_MAX_CARD_DEVS 256

#endif /* DYNPROF_EVENTS_H */
