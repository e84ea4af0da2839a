/* SPDX-License-Identifier: MIT */
/* Between dynprof and its watchdog (watchdog.c, watchdog_child.c): the messages. */
#ifndef DYNPROF_WATCHDOG_IMPL_H
#define DYNPROF_WATCHDOG_IMPL_H

#include <stdint.h>
#include <sys/types.h>

enum wd_op {
	WD_HOLD = 1, /* an fd comes with it (SCM_RIGHTS) */
	WD_OPEN,     /* a window may be open on `key` */
	WD_CLOSED,   /* none is */
	WD_RELEASE,  /* close the copy of `key`; the watchdog sends the message back */
	WD_DONE,     /* exit touching nothing */
};

/*
 * One message on the SOCK_SEQPACKET pair. `key` is dynprof's fd number of
 * the connection: unique among open connections, and dynprof releases a
 * key before it closes the fd, so the key is never reused while held.
 */
struct wd_msg {
	int32_t op;
	int32_t key;
	int32_t pid;   /* WD_HOLD: the target's host pid (for the watchdog's lines) */
	int32_t proto; /* WD_HOLD: enum proto_version */
};

/*
 * The child's whole life: serve `chan` until `parent` dies (then end the
 * windows) or says done. Syscalls only: the parent may have had threads.
 */
__attribute__((noreturn)) void watchdog_child_main(int chan, pid_t parent, int timeout_ms);

#endif /* DYNPROF_WATCHDOG_IMPL_H */
