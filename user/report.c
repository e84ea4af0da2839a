// SPDX-License-Identifier: MIT
/* Printing dynprof's lines (see report.h). */
#include <stdio.h>

#include "report.h"

static void vline(const char *prefix, const char *fmt, va_list ap)
{
	fputs(prefix, stdout);
	vfprintf(stdout, fmt, ap);
	fputc('\n', stdout);
	fflush(stdout);
}

void report_verror(const char *fmt, va_list ap)
{
	vline("[ERROR] ", fmt, ap);
}

#define REPORT_FN(name, prefix)                      \
	void name(const char *fmt, ...)              \
	{                                            \
		va_list ap;                          \
		va_start(ap, fmt);                   \
		vline(prefix, fmt, ap);              \
		va_end(ap);                          \
	}

REPORT_FN(report_error, "[ERROR] ")
REPORT_FN(report_warning, "[WARNING] ")
REPORT_FN(report_info, "[INFO] ")
REPORT_FN(report_plain, "")
