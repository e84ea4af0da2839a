/* SPDX-License-Identifier: MIT */
/*
 * A stand-in server for a card user that serves no dynamic-profiling
 * socket (a job started without PROFILING_MODE=dynamic), so that
 * --host-sys still gives it windows: host-only ones. The session talks to
 * it as to any target's server, CANN 9.x's protocol (v2) over one end of a
 * socketpair, and everything above the connection (commands, rules,
 * remote control, accounting) is what a real target gets. The stand-in
 * makes each window's PROF_ folder in the result folder it is given
 * (--output: dynprof's own, never the target's filesystem) with the host
 * part CANN writes (shared/profhost.h: sample.json, start_info,
 * host_start.log, info.json describing the target's pid and network
 * namespace; end_info at STOP); host/data/ gets what dynprof collects
 * itself, written by hostdata_window_write as for any window.
 *
 * A thread of its own per target serves the connection: it never waits on
 * the target, and the session never waits on it longer than on a server's
 * answer. It ends at QUIT or when the session closes its end, stopping an
 * open window first (end_info).
 */
#ifndef DYNPROF_STANDIN_H
#define DYNPROF_STANDIN_H

#include "shared/compiler.h"

/* info.json's chip when none is known: msprof's export needs one it knows (the Ascend 910B). */
#define STANDIN_DEFAULT_CHIP 5

struct standin_desc {
	int pid;   /* the target (host pid): its /proc/<pid>/net/dev */
	int nspid; /* its pid in its own namespace: the folder's name and info.json's */
	int chip;  /* info.json's platform_version */
	const char *result_dir; /* where its PROF_ folders go (must exist) */
};

/* Start the stand-in for `d`. The client's end of the connection, or a negative errno. */
int standin_start(const struct standin_desc *d) DP_MUST_CHECK;

#endif /* DYNPROF_STANDIN_H */
