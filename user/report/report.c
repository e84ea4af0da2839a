// SPDX-License-Identifier: MIT
/* Printing dynprof's lines (see report.h). */
#include <stdio.h>
#include <stdlib.h>

#include "report/escape.h"
#include "report/events_out.h"
#include "report/report.h"

/*
 * A line's text, formatted and then escaped (report/escape.h): a target's
 * text in it (a v1 reply detail, a folder name, a path) can neither start a
 * line of its own nor reach the terminal as a control sequence. NULL when
 * out of memory.
 */
static char *format_escaped(const char *fmt, va_list ap)
{
	char *text = NULL, *safe;

	if (vasprintf(&text, fmt, ap) < 0)
		return NULL;
	if (text_is_plain(text))
		return text;
	safe = text_escape_dup(text);
	free(text);
	return safe;
}

static void vline(const char *prefix, const char *fmt, va_list ap)
{
	char *text = format_escaped(fmt, ap);

	printf("%s%s\n", prefix, text ? text : "(out of memory)");
	fflush(stdout);
	free(text);
}

/* Format once, so the console line and the event carry the same text. */
static void verror_about(int pid, const char *fmt, va_list ap)
{
	char *text = format_escaped(fmt, ap);

	if (!text) {
		puts("[ERROR] dynprof: out of memory");
		return;
	}
	printf("[ERROR] %s\n", text);
	fflush(stdout);
	events_error(pid, text);
	free(text);
}

void report_verror(const char *fmt, va_list ap)
{
	verror_about(0, fmt, ap);
}

void report_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror_about(0, fmt, ap);
	va_end(ap);
}

void report_target_error(int pid, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror_about(pid, fmt, ap);
	va_end(ap);
}

#define REPORT_FN(name, prefix)         \
	void name(const char *fmt, ...) \
	{                               \
		va_list ap;             \
		va_start(ap, fmt);      \
		vline(prefix, fmt, ap); \
		va_end(ap);             \
	}

REPORT_FN(report_warning, "[WARNING] ")
REPORT_FN(report_info, "[INFO] ")
REPORT_FN(report_plain, "")
