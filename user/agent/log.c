// SPDX-License-Identifier: MIT
/* The optional event log (see log.h). */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#include "agent/log.h"

static atomic_int log_on;

void agent_log_enable(int on)
{
	atomic_store(&log_on, on);
}

void agent_log(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n, m;

	if (!atomic_load(&log_on))
		return;
	n = snprintf(line, sizeof(line), "dynprof-agent[%d]: ", (int)getpid());
	va_start(ap, fmt);
	m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		return;
	n += m;
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2; /* cut long lines, keep the newline */
	line[n++] = '\n';
	/* One write, so lines from the host's threads do not interleave ours. */
	if (write(STDERR_FILENO, line, (size_t)n) < 0)
		return;
}
