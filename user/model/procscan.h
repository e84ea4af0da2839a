/* SPDX-License-Identifier: MIT */
/*
 * Reading one process from /proc into a struct pm_proc (the process
 * model's scan and its lazy reads after kernel events).
 *
 * Every file is opened relative to one O_PATH fd of /proc/<pid>: that fd
 * stays bound to the process it was opened for, so if the pid is freed and
 * reused midway, the reads fail (-ESRCH) instead of mixing two processes.
 */
#ifndef DYNPROF_PROCSCAN_H
#define DYNPROF_PROCSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proc/carddevs.h"
#include "model/pm_proc.h"
#include "shared/compiler.h"

/* What recognises cards among a process's fds. */
struct procscan_cards {
	const struct card_patterns *patterns;
	const struct card_devs *devs;
};

/*
 * Everything but the socket fields: pid, start_time, ppid, NSpid chain,
 * uid, comm, exe, cmdline, container, cards; complete = true. Fields that
 * cannot be read (exe and fds of another user's process when not root)
 * stay empty. With `quick`, status and cgroup are not read (ppid, nspid,
 * uid, container stay 0/""): procmodel.c's rescan of a known process
 * reads them again only when its start time, comm, exe, cmdline or cards
 * changed, which saves a third of the time per process. With c NULL the
 * fds are not read (cards 0: the caller read them just now). 0; -ESRCH
 * gone or a zombie; other negative errno when stat or status cannot be read.
 */
int procscan_read(int pid, const struct procscan_cards *c, bool quick, struct pm_proc *out) DP_MUST_CHECK;

/*
 * Who a target is, for its records: uid, NSpid chain, cmdline, container
 * and container_name only (no fds, no exe). 0 or a negative errno.
 */
int procscan_origin(int pid, struct pm_proc *out) DP_MUST_CHECK;

/*
 * p's container and container_name read again (p->pid, p->start_time and
 * p->nslevels as they are): 0, or a negative errno (-ESRCH: the pid is
 * another process's now) with p unchanged.
 */
int procscan_container(struct pm_proc *p) DP_MUST_CHECK;

/*
 * The cards held by `pid` now, leaving out fd `skip_fd` (-1: none), for
 * the process started at `start` (0: any). -ESRCH: gone or another
 * process; -EACCES: fds not readable.
 */
int procscan_cards(int pid, unsigned long long start, const struct procscan_cards *c, int skip_fd,
		   uint64_t *cards) DP_MUST_CHECK;

/*
 * The image a process runs now: p->exe and p->cmdline read as a scan reads
 * them (the others untouched). 0, or negative errno ("" both) when gone.
 */
int procscan_image(int pid, struct pm_proc *p) DP_MUST_CHECK;

/* readlink /proc/<pid>/exe into out ("" on failure). 0 or negative errno. */
int procscan_exe(int pid, char *out, size_t len) DP_MUST_CHECK;

/* ---- pure helpers (unit tests) ---- */

/*
 * PPid and the NSpid chain from status text. The chain is host first;
 * deeper than `max` levels, the middle is dropped (the host and the
 * innermost levels stay). A kernel without NSpid (< 4.1) gives the Pid:
 * value alone. 0 or -EINVAL.
 */
int procscan_parse_status(const char *text, int *ppid, int *nspid, int max, int *nslevels) DP_MUST_CHECK;

/* comm from stat text: between the first '(' and the last ')'. 0 or -EINVAL. */
int procscan_parse_comm(const char *stat_text, char *out, size_t len) DP_MUST_CHECK;

/*
 * argv as a NUL-separated block (/proc/<pid>/cmdline, an exec event's
 * args) joined by spaces into out, cut to fit; trailing NULs and a block
 * cut mid-argument are fine; other control characters become '?' so a
 * listing stays one line per process.
 */
void procscan_join_args(const char *buf, size_t len, char *out, size_t outlen);

/*
 * A task's start_boottime in ns to /proc's clock ticks (stat field 22),
 * computed as the kernel does (nsec_to_clock_t): ns / (1e9 / hz).
 * hz <= 0 gives 0 (unknown).
 */
unsigned long long procscan_ns_to_ticks(unsigned long long ns, long hz);

#endif /* DYNPROF_PROCSCAN_H */
