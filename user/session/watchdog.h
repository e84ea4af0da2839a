/* SPDX-License-Identifier: MIT */
/*
 * The watchdog: a child process that ends the windows dynprof leaves open
 * when it dies by any means, SIGKILL included (which no handler sees).
 *
 * It is forked before any target connects and holds a duplicate of each
 * target connection (sent over a socketpair with SCM_RIGHTS once its
 * handshake succeeded), told per connection whether a window may be open.
 * It reads nothing from and writes nothing to the targets while dynprof
 * lives: the connection is dynprof's, one writer at a time. When dynprof
 * is gone (end of the socketpair, or its pidfd readable), it sends STOP to
 * each connection with a window, then QUIT to every one, in the target's
 * wire generation, waits a bounded time for the replies, closes them and
 * exits 0. Told "done" (dynprof's normal end) it exits touching nothing.
 *
 * The calls are made by target.c, the one place a connection is held,
 * a window opened or closed, and a connection closed; session code calls
 * watchdog_start and watchdog_done. Every call is a no-op when the
 * watchdog is not running (unit tests, or it could not start).
 */
#ifndef DYNPROF_WATCHDOG_H
#define DYNPROF_WATCHDOG_H

#include <stdbool.h>

#include "dynprof/proto.h"

/* The watchdog's name in /proc/<pid>/comm (ps, tests). */
#define WATCHDOG_COMM "dynprof-wd"

/*
 * Fork the watchdog (once per process; later calls do nothing).
 * `timeout_ms`: how long it waits for each STOP's reply (--timeout).
 * On failure one warning is printed and dynprof runs without it.
 */
void watchdog_start(int timeout_ms);

/* A connection to target `pid` speaking `proto` is usable (handshake done): hold a copy. */
void watchdog_hold(int fd, int pid, enum proto_version proto);

/*
 * Whether connection `fd` may have a window open: true from the moment a
 * START is sent (a reply dynprof did not live to read may have opened
 * it), false once a reply says none is.
 */
void watchdog_window(int fd, bool open);

/* Connection `fd` is about to be closed: the watchdog closes its copy first (acknowledged). */
void watchdog_release(int fd);

/* dynprof ends normally: the watchdog exits without touching any target; waited for. */
void watchdog_done(void);

/* The watchdog's pid, or 0 when none runs. */
int watchdog_pid(void);

#endif /* DYNPROF_WATCHDOG_H */
