/* SPDX-License-Identifier: MIT */
/*
 * Inside discover (discover.h): the handle and what its three files share.
 *   discover.c        the API, the table of watched pids, pidfd helpers
 *   discover_bpf.c    loading the BPF programs, the ring buffer, card map
 *   discover_pidfd.c  the fallback: one pidfd per watched pid in an epoll set
 * Not for other modules.
 */
#ifndef DYNPROF_DISCOVER_IMPL_H
#define DYNPROF_DISCOVER_IMPL_H

#include <bpf/libbpf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "kernel/discover.h"
#include "shared/compiler.h"

struct discover_bpf;

struct watch {
	int pid;
	int pidfd;         /* fallback: the pidfd in the epoll set; BPF: -1 */
	uint64_t since_ns; /* CLOCK_MONOTONIC when the watch began */
};

struct discover {
	bool tracking;             /* opened by discover_open_tracking */
	struct discover_bpf *skel; /* NULL: no BPF (pidfd fallback) */
	struct ring_buffer *rb;
	int epfd;                  /* fallback: epoll set of the pidfds */
	struct watch *w;           /* watched pids, unordered */
	size_t n, cap;
	unsigned long long lost_seen;
	bool print_set;            /* holds bpfutil's libbpf message capture */
	/* Set for the duration of discover_consume. */
	void (*on_exit)(void *ctx, int pid);
	void *ctx;
	int reported;
	/* Set for the duration of discover_consume_events. */
	void (*on_event)(void *ctx, const struct dp_event *e);
	void *ev_ctx;
	int delivered;
};

/* discover.c */
uint64_t discover_now_ns(void);
int discover_pidfd_open(int pid) DP_MUST_CHECK;
bool discover_pidfd_exited(int pidfd);
ssize_t discover_watch_find(const struct discover *d, int pid);
int discover_watch_add(struct discover *d, int pid, int pidfd, uint64_t since_ns) DP_MUST_CHECK;
void discover_watch_drop(struct discover *d, size_t i);
void discover_report_exit(struct discover *d, size_t i);

/* discover_bpf.c */
int discover_bpf_setup(struct discover *d, char *why, size_t why_len) DP_MUST_CHECK;
void discover_bpf_teardown(struct discover *d);
int discover_bpf_watch(struct discover *d, int pid) DP_MUST_CHECK;
void discover_bpf_unwatch(struct discover *d, int pid);
int discover_bpf_consume(struct discover *d) DP_MUST_CHECK;
int discover_bpf_add_card(struct discover *d, unsigned major, unsigned minor,
			  int index) DP_MUST_CHECK;
int discover_bpf_fd(const struct discover *d);
unsigned long long discover_bpf_lost(const struct discover *d);

/* discover_pidfd.c */
int discover_pidfd_watch(struct discover *d, int pid) DP_MUST_CHECK;
int discover_pidfd_consume(struct discover *d) DP_MUST_CHECK;

#endif /* DYNPROF_DISCOVER_IMPL_H */
