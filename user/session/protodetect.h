/* SPDX-License-Identifier: MIT */
/*
 * `--protocol=auto`: which wire generation a target speaks, decided from
 * what can be read without a round trip (a wrong guess makes the server
 * wait or close, so guessing by trying is not safe):
 *  1. our agent mapped in the target (libdynprof_agent in /proc/<pid>/maps,
 *     as every library here: mapped executable, proc/procmaps.h):
 *     DYNPROF_AGENT_PROTOCOL from its environ, exactly "v1" means v1,
 *     anything else or unset v2 (the agent's default);
 *  2. libprofimpl.so mapped: v2 (every v2 server is built into it);
 *  2b. the CANN toolkit the target has mapped (libascendcl, libmsprofiler,
 *     libprofapi, or libruntime under an Ascend folder; never the driver's
 *     libraries): its version file, read inside the target's root
 *     (/proc/<pid>/root, symlinks such as "latest" resolved there);
 *     releases before 8.5.0 speak v1, 8.5.0 and later v2;
 *  3. DYNPROF_AGENT_PROTOCOL set without a mapped agent: a statically linked
 *     agent does not show in maps, so the variable decides as in 1. It comes
 *     after 2 so that the variable leaked into a real CANN process (exported
 *     in a shell while trying the agent) does not override CANN's version;
 *  4. otherwise v2, the current generation.
 */
#ifndef DYNPROF_PROTODETECT_H
#define DYNPROF_PROTODETECT_H

#include <stddef.h>

#include "dynprof/proto.h"
#include "shared/compiler.h"

#define PROTODETECT_AGENT_ENV "DYNPROF_AGENT_PROTOCOL"

/*
 * Decide for `pid`; `why` gets a short reason, e.g.
 * "CANN 7.0.0 (/usr/local/Ascend/ascend-toolkit/7.0.0/x86_64-linux/ascend_toolkit_install.info): v1".
 * Never fails: whatever cannot be read leads to v2, and why says so.
 */
enum proto_version protodetect(int pid, char *why, size_t whylen);

/* ---- pure parts, for unit tests ------------------------------------------ */

/*
 * Toolkit root from a library path as maps shows it: the folder holding the
 * "<arch>-linux" folder (…/8.0.RC1/x86_64-linux/lib64/libascendcl.so ->
 * …/8.0.RC1), else the folder holding "lib64", one package folder such as
 * runtime/ or acllib/ up (…/nnrt/6.0/runtime/lib64/x.so -> …/nnrt/6.0).
 * 0; -ENOENT when the path has neither; -ENAMETOOLONG.
 */
int protodetect_toolkit_root(const char *lib_path, char *root, size_t len) DP_MUST_CHECK;

/*
 * The "<arch>-linux" component of a library path ("x86_64-linux"), or
 * -ENOENT.
 */
int protodetect_path_arch(const char *lib_path, char *arch, size_t len) DP_MUST_CHECK;

/* 1 when a mapped file is one of CANN's libraries, else 0 (the driver's are not). */
int protodetect_is_cann_lib(const char *path);

/* 1 when a mapped file is libprofimpl.so (any version suffix), else 0. */
int protodetect_is_profimpl_lib(const char *path);

/* 1 when a mapped file is libdynprof_agent, else 0. */
int protodetect_is_agent_lib(const char *path);

/*
 * A CANN version from a version file's text. Understood, in this order:
 * a "version=<v>" line (key case-insensitive: "Version=8.0.RC1" in
 * *_install.info files), then "runtime_running_version=[<inner>:<cann>]"
 * (latest/version.cfg; the CANN version is after the ':'; the inner one
 * before it is a component number such as 7.3.0.1.231 and is not used),
 * then any other "*_running_version". Quotes, brackets and a "CANN-" prefix
 * are dropped. Returns the major number and copies the version; -1 when
 * there is none or it does not start with a digit.
 */
int protodetect_parse_version(const char *text, char *version, size_t len) DP_MUST_CHECK;

/* The generation a CANN version string speaks: v1 below 8.5, else v2 (also when unknown). */
enum proto_version protodetect_for_version(const char *version);

#endif /* DYNPROF_PROTODETECT_H */
