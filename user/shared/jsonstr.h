/* SPDX-License-Identifier: MIT */
/*
 * A JSON string written to a stream: quotes, '"' and '\' escaped, control
 * characters and DEL as \u00XX, every other byte as it is. Shared by the
 * params dynprof prints (--dry-run) and the effective set the agent records.
 */
#ifndef DYNPROF_JSONSTR_H
#define DYNPROF_JSONSTR_H

#include <stdio.h>

void json_put_string(FILE *f, const char *s);

#endif /* DYNPROF_JSONSTR_H */
