// SPDX-License-Identifier: MIT
/*
 * Kernel events about processes (see discover.h): the API. It checks the
 * arguments, picks the back end when the handle opens (BPF, else the pidfd
 * fallback) and from then on calls it only through its operations
 * (discover_impl.h). The back ends keep their own watched pids.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernel/discover.h"
#include "kernel/discover_impl.h"

struct discover {
	bool tracking;                  /* opened by discover_open_tracking */
	const struct discover_ops *ops; /* &discover_bpf_ops or &discover_pidfd_ops */
	struct discover_be *be;
};

static struct discover *open_mode(bool use_bpf, bool tracking, const char **note)
{
	static char note_buf[320];
	struct discover *d = calloc(1, sizeof(*d));
	char why[256];
	int err;

	if (note)
		*note = NULL;
	if (!d)
		return NULL;
	d->tracking = tracking;

	if (use_bpf) {
		if (discover_bpf_ops.open(&d->be, tracking, why, sizeof(why)) == 0) {
			d->ops = &discover_bpf_ops;
			return d;
		}
		/* A tracking caller (tracker.c) says itself what it uses instead. */
		snprintf(note_buf, sizeof(note_buf), "BPF unavailable (%s)%s", why,
			 tracking ? "" : ": watching targets with pidfds");
		if (note)
			*note = note_buf;
	}
	/*
	 * Without BPF, the pidfd fallback. A tracking handle gets it too: its
	 * fd then never polls readable unless pids are watched, and
	 * discover_consume_events() delivers nothing.
	 */
	err = discover_pidfd_ops.open(&d->be, tracking, why, sizeof(why));
	if (err) {
		free(d);
		errno = -err;
		return NULL;
	}
	d->ops = &discover_pidfd_ops;
	return d;
}

struct discover *discover_open(bool use_bpf, const char **note)
{
	return open_mode(use_bpf, false, note);
}

struct discover *discover_open_tracking(bool use_bpf, const char **note)
{
	return open_mode(use_bpf, true, note);
}

void discover_close(struct discover *d)
{
	if (!d)
		return;
	d->ops->close(d->be);
	free(d);
}

bool discover_uses_bpf(const struct discover *d)
{
	return d && d->ops == &discover_bpf_ops;
}

int discover_watch(struct discover *d, int pid)
{
	if (!d || pid <= 0)
		return -EINVAL;
	return d->ops->watch(d->be, pid);
}

void discover_unwatch(struct discover *d, int pid)
{
	if (d)
		d->ops->unwatch(d->be, pid);
}

int discover_fd(const struct discover *d)
{
	if (!d)
		return -EINVAL;
	return d->ops->fd(d->be);
}

int discover_consume(struct discover *d, void (*on_exit)(void *ctx, int pid), void *ctx)
{
	if (!d)
		return -EINVAL;
	return d->ops->consume(d->be, on_exit, ctx);
}

int discover_consume_events(struct discover *d,
			    void (*on_event)(void *ctx, const struct dp_event *e), void *ctx)
{
	if (!d || !on_event)
		return -EINVAL;
	return d->ops->consume_events(d->be, on_event, ctx);
}

int discover_add_card(struct discover *d, unsigned major, unsigned minor, int index)
{
	if (!d || index < 0 || !d->tracking)
		return -EINVAL; /* attach mode loads no open filter */
	/* The kernel's dev_t: 12 bits of major, 20 of minor. */
	if (major >= 1U << 12 || minor >= 1U << 20)
		return -ERANGE;
	return d->ops->add_card(d->be, major, minor, index);
}

unsigned long long discover_lost_events(const struct discover *d)
{
	return d ? d->ops->lost(d->be) : 0;
}

const char *discover_open_hook(const struct discover *d, bool *closes)
{
	*closes = false;
	return d && d->tracking ? d->ops->hook(d->be, closes) : NULL;
}
