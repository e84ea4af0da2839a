/* SPDX-License-Identifier: MIT */
/*
 * The lines dynprof prints. All on standard output, as msprof prints them,
 * prefixed "[ERROR] ", "[WARNING] " or "[INFO] " (or nothing, for msprof's
 * plain result lines), one whole line per call, flushed at once so output
 * interleaves correctly with the targets' and scripts see it as it happens.
 * Error lines also become --events "error" events, with the same text.
 */
#ifndef DYNPROF_REPORT_H
#define DYNPROF_REPORT_H

#include <stdarg.h>

void report_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void report_verror(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
/* An error about target `pid`: its event carries the pid. */
void report_target_error(int pid, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void report_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void report_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void report_plain(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* DYNPROF_REPORT_H */
