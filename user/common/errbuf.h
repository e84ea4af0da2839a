/* SPDX-License-Identifier: MIT */
/*
 * Error buffers: the functions that document "-1 with an error buffer"
 * (or a reason buffer, `why`) fill the caller's buffer through this.
 */
#ifndef DYNPROF_ERRBUF_H
#define DYNPROF_ERRBUF_H

#include <stddef.h>

/*
 * printf into buf (len bytes, always NUL-terminated, cut short when too
 * long: a message may lose its end, never overflow). A NULL buf or a len
 * of 0 writes nothing. Returns -1, for `return errbuf_set(...);`.
 */
int errbuf_set(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif /* DYNPROF_ERRBUF_H */
