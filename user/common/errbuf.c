// SPDX-License-Identifier: MIT
/* Error buffers (see user/common/errbuf.h). */
#include <stdarg.h>
#include <stdio.h>

#include "common/errbuf.h"

int errbuf_set(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!buf || len == 0)
		return -1;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return -1;
}
