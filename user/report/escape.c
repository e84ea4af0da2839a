// SPDX-License-Identifier: MIT
/* Escaping untrusted text for printing (see escape.h). */
#include <stdlib.h>
#include <string.h>

#include "report/escape.h"

static bool plain_byte(unsigned char c)
{
	return c >= 0x20 && c < 0x7f;
}

bool text_is_plain(const char *in)
{
	for (const unsigned char *p = (const unsigned char *)in; *p; p++)
		if (!plain_byte(*p))
			return false;
	return true;
}

size_t text_escape(const char *in, char *out, size_t outlen)
{
	static const char hex[] = "0123456789abcdef";
	size_t need = 0, used = 0;
	bool full = outlen == 0;

	for (const unsigned char *p = (const unsigned char *)in; *p; p++) {
		char esc[4];
		size_t n;

		if (plain_byte(*p)) {
			esc[0] = (char)*p;
			n = 1;
		} else {
			esc[0] = '\\';
			esc[1] = 'x';
			esc[2] = hex[*p >> 4];
			esc[3] = hex[*p & 15];
			n = 4;
		}
		need += n;
		if (!full && used + n < outlen) {
			memcpy(out + used, esc, n);
			used += n;
		} else {
			full = true; /* nothing later is added, not even a shorter escape */
		}
	}
	if (outlen)
		out[used] = '\0';
	return need;
}

char *text_escape_dup(const char *in)
{
	size_t n = text_escape(in, NULL, 0);
	char *out = malloc(n + 1);

	if (out)
		text_escape(in, out, n + 1);
	return out;
}
