/* SPDX-License-Identifier: MIT */
/*
 * Destroying BPF links off the caller's thread. Closing a uprobe link waits
 * for the kernel's RCU grace periods under a kernel-wide mutex: ~100 ms per
 * link on Linux 6.18 (measured), and closes from parallel threads queue up
 * behind each other. A console forgetting a process with 10 probes would
 * stall a second; handed here, the links close in the background.
 */
#ifndef DYNPROF_LINKREAPER_H
#define DYNPROF_LINKREAPER_H

#include <stdint.h>

struct bpf_link;
struct linkreaper;

/* A reaper whose thread starts with the first link; NULL when out of memory. */
struct linkreaper *linkreaper_new(void);

/* Destroy `link` in the background (here and now when no thread can run it). */
void linkreaper_add(struct linkreaper *r, struct bpf_link *link, uint64_t tag);

/* Return once no link added with `tag` is still attached. */
void linkreaper_wait(struct linkreaper *r, uint64_t tag);

/* Destroy every link still queued, stop the thread, free. */
void linkreaper_free(struct linkreaper *r);

#endif /* DYNPROF_LINKREAPER_H */
