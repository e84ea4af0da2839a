/* SPDX-License-Identifier: MIT */
/*
 * Escaping text that came from a target or its filesystem (v1 reply
 * details, folder names, command lines, comm, paths) before dynprof prints
 * it: on the console, in --json and in --events. One function, so every
 * output path escapes the same way.
 *
 * Each byte below 0x20, 0x7f and every byte from 0x80 becomes \xHH (a
 * backslash stays as it is: msprof's own messages show it so, and it moves
 * no cursor): what is printed is then printable ASCII only, so it
 * cannot move the cursor, set a terminal title or start a forged line, and
 * as a JSON string (cJSON escapes the backslashes) it is valid JSON and
 * valid UTF-8 whatever bytes the target sent. Plain printable text is left
 * as it is.
 */
#ifndef DYNPROF_ESCAPE_H
#define DYNPROF_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>

#include "shared/compiler.h"

/*
 * Escape `in` into out (outlen > 0, always NUL-terminated; an escape that
 * would not fit whole is left out). Returns the length the whole result
 * needs (without the NUL), as snprintf does.
 */
size_t text_escape(const char *in, char *out, size_t outlen);

/* The escaped text in a new buffer (free it); NULL when out of memory. */
char *text_escape_dup(const char *in) DP_MUST_CHECK;

/* true when text_escape would change nothing. */
bool text_is_plain(const char *in);

#endif /* DYNPROF_ESCAPE_H */
