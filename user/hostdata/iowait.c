// SPDX-License-Identifier: MIT
/* --host-sys=disk's iowait loader (see iowait.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/iowait.skel.h"
#include "dynprof/iowait.h"
#include "hostdata/iowait.h"
#include "kernel/bpfutil.h"
#include "shared/clock.h"

static struct iowait_bpf *skel;
/*
 * Processes watched now. The programs run on every context switch and
 * wakeup of the host (docs/BENCHMARKS.md: under 0.1 us each), so they
 * are attached only while at least one process is watched.
 */
static int nwatched;

static const char attach_step[] = "attaching to raw tracepoints sched_{switch,wakeup}";

int iowait_load(char *why, size_t why_len)
{
	const char *step = "opening the BPF object";
	int err;

	if (skel)
		return 0;
	err = bpfutil_load_begin(why, why_len);
	if (err)
		return err;
	skel = iowait_bpf__open();
	err = skel ? 0 : -errno;
	if (!err) {
		step = "loading the BPF programs";
		err = iowait_bpf__load(skel);
	}
	if (!err) {
		/* Tried once here, so a kernel that refuses says so at the start; attached again per watch. */
		step = attach_step;
		err = iowait_bpf__attach(skel);
		if (!err)
			iowait_bpf__detach(skel);
	}
	bpfutil_load_end(why, why_len, step, err);
	if (err) {
		iowait_bpf__destroy(skel);
		skel = NULL;
	}
	return err;
}

int iowait_watch(uint32_t tgid, char *why, size_t why_len)
{
	int err;

	if (!skel)
		return -ENODEV;
	if (!nwatched) {
		bpfutil_quiet_hold();
		bpfutil_quiet_reset();
		err = iowait_bpf__attach(skel);
		bpfutil_load_end(why, why_len, attach_step, err);
		if (err)
			return err;
	}
	err = bpfutil_tgid_watch(skel->maps.procs, tgid,
				 &(struct dp_iowait_proc){ .since_ns = clock_mono_ns() },
				 sizeof(struct dp_iowait_proc), why, why_len);
	if (!err)
		nwatched++;
	else if (!nwatched)
		iowait_bpf__detach(skel);
	return err;
}

int iowait_read(uint32_t tgid, uint64_t *wait_ns)
{
	struct dp_iowait_proc p = { 0 };
	int err = skel ? bpfutil_tgid_value(skel->maps.procs, tgid, &p, sizeof(p)) : -ENODEV;

	*wait_ns = err ? 0 : p.wait_ns;
	return err;
}

void iowait_unwatch(uint32_t tgid)
{
	if (!skel)
		return;
	bpf_map__delete_elem(skel->maps.procs, &tgid, sizeof(tgid), 0);
	if (nwatched > 0 && --nwatched == 0)
		iowait_bpf__detach(skel);
}
