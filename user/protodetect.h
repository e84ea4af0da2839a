/* SPDX-License-Identifier: MIT */
/*
 * `--protocol=auto`: which wire generation a target speaks, decided from
 * what can be read without a round trip (a wrong guess makes the server
 * wait or close, so guessing by trying is not safe):
 *  1. our agent in the target (libdynprof_agent mapped, or linked and
 *     DYNPROF_AGENT_PROTOCOL in its environ): what that variable says;
 *  2. the CANN toolkit the target has mapped (/proc/<pid>/maps): its
 *     version file; releases before 8.0 speak v1, 8.0 and later v2;
 *  3. otherwise v2, the current generation.
 */
#ifndef DYNPROF_PROTODETECT_H
#define DYNPROF_PROTODETECT_H

#include <stddef.h>

#include "dynprof/proto.h"

/* Decide for `pid`; `why` gets a short reason ("CANN 7.0.0 (version.cfg)"). */
enum proto_version protodetect(int pid, char *why, size_t whylen);

/* Pure parts, for unit tests. */
/* Toolkit root from one maps line's path, e.g. /usr/local/Ascend/ascend-toolkit/8.0.RC1 */
int protodetect_toolkit_root(const char *lib_path, char *root, size_t len);
/* "version=7.0.0" style text -> major number; -1 when absent. */
int protodetect_parse_version(const char *text, char *version, size_t len);
/* The generation a CANN version string speaks (v1 below 8, else v2). */
enum proto_version protodetect_for_version(const char *version);

#endif /* DYNPROF_PROTODETECT_H */
