// SPDX-License-Identifier: MIT
/* --host-sys=osrt's loader (see osrt.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/osrt.skel.h"
#include "hostdata/osrt.h"
#include "kernel/bpfutil.h"
#include "kernel/linkreaper.h"

static struct osrt_bpf *skel;
static struct ring_buffer *ring;
static struct linkreaper *reaper; /* the pthread probes' links close off the window's thread */
static osrt_call_fn call_fn;
static void *call_ctx;

static int on_record(void *ctx, void *data, size_t size)
{
	(void)ctx;
	if (size >= sizeof(struct dp_osrt_call))
		call_fn(call_ctx, data);
	return 0;
}

static void unload(void)
{
	ring_buffer__free(ring);
	ring = NULL;
	osrt_bpf__destroy(skel);
	skel = NULL;
}

int osrt_loaded(void)
{
	return ring != NULL;
}

int osrt_load(osrt_call_fn fn, void *ctx, char *why, size_t why_len)
{
	const char *step = "opening the BPF object";
	int err;

	if (ring)
		return 0;
	err = bpfutil_load_begin(why, why_len);
	if (err)
		return err;
	skel = osrt_bpf__open();
	err = skel ? 0 : -errno;
	if (!err) {
		/* The object's size is the header's default; a test build asks for less. */
		step = "sizing the ring buffer";
		err = bpf_map__set_max_entries(skel->maps.calls, DP_OSRT_RINGBUF_BYTES);
	}
	if (!err) {
		/* Attached per process by osrt_pth_attach, not by the skeleton. */
		bpf_program__set_autoattach(skel->progs.dp_osrt_pth_entry, false);
		bpf_program__set_autoattach(skel->progs.dp_osrt_pth_return, false);
		step = "loading the BPF programs";
		err = osrt_bpf__load(skel);
	}
	if (!err) {
		step = "attaching to raw tracepoints sys_{enter,exit}";
		err = osrt_bpf__attach(skel);
	}
	if (!err) {
		step = "creating the ring buffer";
		ring = ring_buffer__new(bpf_map__fd(skel->maps.calls), on_record, NULL, NULL);
		err = ring ? 0 : -errno;
	}
	bpfutil_load_end(why, why_len, step, err);
	if (err)
		unload();
	call_fn = fn;
	call_ctx = ctx;
	return err;
}

int osrt_watch(uint32_t tgid, char *why, size_t why_len)
{
	struct dp_osrt_proc zero = { 0 };

	return ring ? bpfutil_tgid_watch(skel->maps.tgids, tgid, &zero, sizeof(zero), why, why_len) :
		      -ENODEV;
}

int osrt_lost(uint32_t tgid, uint64_t *lost)
{
	struct dp_osrt_proc p = { 0 };
	int err = ring ? bpfutil_tgid_value(skel->maps.tgids, tgid, &p, sizeof(p)) : -ENODEV;

	*lost = err ? 0 : p.lost;
	return err;
}

int osrt_unwatch(uint32_t tgid, uint64_t *lost)
{
	int err = osrt_lost(tgid, lost);

	/* Deleted after the read: a loss between the two is the last call of the window. */
	if (err != -ENODEV)
		bpf_map__delete_elem(skel->maps.tgids, &tgid, sizeof(tgid), 0);
	return err;
}

int osrt_consume(void)
{
	return ring ? ring_buffer__consume(ring) : 0;
}

int osrt_pth_attach(int pid, const char *path, uint64_t offset, unsigned func,
		    struct bpf_link *links[2], char *why, size_t why_len)
{
	LIBBPF_OPTS(bpf_uprobe_opts, ropts, .bpf_cookie = func, .retprobe = true);
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .bpf_cookie = func);
	int rc;

	links[0] = links[1] = NULL;
	if (!ring)
		return -ENODEV;
	if (!reaper && !(reaper = linkreaper_new()))
		return -ENOMEM;
	/*
	 * A window's earlier probes on this process may still be closing: a
	 * call then runs both pairs, and the depth kept per (thread, function)
	 * still makes it one record. Not waited for: that takes ~100 ms a link.
	 */
	bpfutil_quiet_reset();
	/*
	 * The return probe first: a call that entered before the entry probe
	 * then returns unseen (no depth), where the other order could record
	 * a return without its entry. Both at one place: a uretprobe needs the
	 * return address on top of the stack (see kernel/probeplace.h).
	 */
	links[1] = bpf_program__attach_uprobe_opts(skel->progs.dp_osrt_pth_return, pid, path,
						   (size_t)offset, &ropts);
	if (links[1])
		links[0] = bpf_program__attach_uprobe_opts(skel->progs.dp_osrt_pth_entry, pid, path,
							   (size_t)offset, &opts);
	if (links[0])
		return 0;
	rc = -errno;
	bpf_link__destroy(links[1]);
	links[1] = NULL;
	bpfutil_failure(why, why_len, "attaching a uprobe and uretprobe", rc ? rc : -EINVAL);
	return rc ? rc : -EINVAL;
}

void osrt_pth_detach(int pid, struct bpf_link *links[2])
{
	for (int i = 0; i < 2; i++) {
		if (links[i] && reaper)
			linkreaper_add(reaper, links[i], (uint64_t)pid);
		else
			bpf_link__destroy(links[i]);
		links[i] = NULL;
	}
}
