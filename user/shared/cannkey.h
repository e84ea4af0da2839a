/* SPDX-License-Identifier: MIT */
/*
 * DYNAMIC_PROFILING_KEY_PID as CANN 9.x and 8.5.0 read it (docs/PROTOCOL.md
 * Part 2 section 8): C++ stoi over the whole text (leading blanks, one
 * sign, digits, nothing after; int32). A value > 0 names the socket with
 * the raw text, so "0777" listens on ..._0777 and " 12" on ..._ 12; the
 * server (our agent) and the client (socklocate) must read it alike.
 *
 * Errors: convention 2 of docs/ERRORS.md (-EINVAL).
 */
#ifndef DYNPROF_CANNKEY_H
#define DYNPROF_CANNKEY_H

#include "shared/compiler.h"

/* The value as stoi reads it; "" or NULL is 0. 0, or -EINVAL (no server starts). */
int cann_key_parse(const char *text, long *value) DP_MUST_CHECK;

#endif /* DYNPROF_CANNKEY_H */
