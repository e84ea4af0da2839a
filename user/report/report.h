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

/*
 * Lines made on a thread beside the loop (common/offloop.h), held until the
 * loop's thread prints them: the --events listeners and the error events
 * are the loop's, and a join's lines belong where its outcome is told.
 * Between report_capture_begin and report_capture_end, every line this
 * thread makes goes into `c` instead; report_capture_flush prints them, in
 * order, on the loop's thread, and empties `c`.
 */
struct report_line;
struct report_capture {
	struct report_line *head, **tail;
};
void report_capture_begin(struct report_capture *c);
void report_capture_end(void);
void report_capture_flush(struct report_capture *c);

#endif /* DYNPROF_REPORT_H */
