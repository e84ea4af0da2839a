// SPDX-License-Identifier: MIT
/*
 * The process model (see procmodel.h): a table of entries keyed by host
 * pid, each one process identified by pid + start time. This file keeps
 * the table consistent and tells the listener; reading a process is
 * procscan.c, its socket sockstate.c, card nodes carddevs.c, the
 * container id container.c.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "proc/carddevs.h"
#include "common/pidtab.h"
#include "model/procmodel.h"
#include "shared/clock.h"
#include "model/procscan.h"
#include "sock/sockstate.h"
#include "shared/decimal.h"

#define PM_ANCESTRY_MAX 4096  /* ppid steps followed at most */
#define PM_SCAN_MAX (1 << 22) /* /proc entries read at most: pid_max's limit */

/* The socket strings of a card holder (pm_proc points into them). */
struct pm_sock {
	char host_path[PATH_MAX];
	char inside[PATH_MAX];
	char home[PATH_MAX];
};

#define PM_SOCKET_LOOK_MS 100      /* a holder's socket looked at again after this ... */
#define PM_SOCKET_LOOK_MAX_MS 1600 /* ... doubling to this while it stays as it was */
/* A new holder without a socket: looked at again this soon, doubling up to PM_SOCKET_LOOK_MS (then the pass has it). */
#define PM_SOCKET_SOON_MS 2

struct pm_entry {
	struct pm_proc p; /* first: listeners are given &e->p */
	struct pm_sock *sock;
	unsigned gen;     /* the last scan that saw it */
	uint64_t read_ns; /* clock_mono_ns() when /proc was last read into it (0 never) */
	/* The periodic socket pass: not before sock_next_ms; sock_wait_ms doubles while nothing changes. */
	int64_t sock_next_ms;
	int sock_wait_ms;
	bool served;    /* left out of the pass (procmodel_set_served) */
	bool soon_done; /* it had its soon looks (procmodel_look_soon) */
};

struct procmodel {
	struct card_patterns patterns; /* a deep copy */
	struct card_devs devs;
	struct procscan_cards cards; /* points at the two above */
	struct pidtab tab;
	/*
	 * Holders that had no socket at their first look: pid -> when to look
	 * again and the wait so far (soon_at). A server's socket often comes a
	 * moment after its card (a preloaded agent's thread binds it while
	 * main() opens the card; CANN within a second): the pass's 100 ms made
	 * one join in a few wait for it.
	 */
	struct pidtab soon;
	pm_listener fn;
	void *ctx;
	long hz; /* clock ticks per second of /proc's times */
	unsigned gen;
};

/* ---- set-up ------------------------------------------------------------------ */

static int copy_patterns(struct card_patterns *dst, const struct card_patterns *src)
{
	size_t total = 0;
	char *p;

	for (int i = 0; i < src->count; i++)
		total += strlen(src->glob[i]) + 1;
	dst->storage = malloc(total ? total : 1);
	if (!dst->storage)
		return -ENOMEM;
	p = dst->storage;
	dst->count = src->count;
	for (int i = 0; i < src->count; i++) {
		size_t n = strlen(src->glob[i]) + 1;

		memcpy(p, src->glob[i], n);
		dst->glob[i] = p;
		p += n;
	}
	return 0;
}

struct procmodel *procmodel_new(const struct card_patterns *patterns)
{
	struct procmodel *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	if (copy_patterns(&m->patterns, patterns) || carddevs_glob(&m->devs, &m->patterns)) {
		cards_free_patterns(&m->patterns);
		free(m);
		errno = ENOMEM;
		return NULL;
	}
	m->cards.patterns = &m->patterns;
	m->cards.devs = &m->devs;
	pidtab_init(&m->tab);
	pidtab_init(&m->soon);
	m->hz = sysconf(_SC_CLK_TCK);
	return m;
}

static void entry_free(struct pm_entry *e)
{
	free(e->sock);
	free(e);
}

void procmodel_free(struct procmodel *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < pidtab_cap(&m->tab); i++)
		if (pidtab_slot(&m->tab, i)->pid)
			entry_free(pidtab_slot(&m->tab, i)->val);
	pidtab_free(&m->tab);
	pidtab_free(&m->soon);
	cards_free_patterns(&m->patterns);
	free(m);
}

void procmodel_set_listener(struct procmodel *m, pm_listener fn, void *ctx)
{
	m->fn = fn;
	m->ctx = ctx;
}

/* ---- entries ------------------------------------------------------------------ */

static void notify(struct procmodel *m, enum pm_change what, struct pm_entry *e)
{
	if (m->fn)
		m->fn(m->ctx, what, &e->p);
}

/* Start times agree, or one of them is unknown (0). */
static bool same_start(unsigned long long a, unsigned long long b)
{
	return !a || !b || a == b;
}

static struct pm_entry *entry_new(int pid)
{
	struct pm_entry *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->p.pid = pid;
	e->p.nspid[0] = pid;
	e->p.nslevels = 1;
	e->p.socket = e->p.socket_inside = e->p.home = "";
	e->p.socket_state = PM_SOCKET_NONE;
	return e;
}

/*
 * Into the table, then announced: EXEC, then what it already holds as if
 * it had just happened (CARD_OPEN, SOCKET), so a process first seen by a
 * poll or a rescan after lost events reads as it would have live.
 * Frees it when the table cannot grow.
 */
static void entry_add(struct procmodel *m, struct pm_entry *e)
{
	e->gen = m->gen;
	if (pidtab_put(&m->tab, e->p.pid, e)) {
		entry_free(e);
		return;
	}
	notify(m, PM_CHANGE_EXEC, e);
	if (e->p.cards)
		notify(m, PM_CHANGE_CARD_OPEN, e);
	if (e->p.socket_state != PM_SOCKET_NONE)
		notify(m, PM_CHANGE_SOCKET, e);
}

static void entry_remove(struct procmodel *m, struct pm_entry *e)
{
	notify(m, PM_CHANGE_EXIT, e);
	pidtab_del(&m->tab, e->p.pid);
	entry_free(e);
}

/* The entry for `pid` if it is the process started at `start`; a stale one exits. */
static struct pm_entry *lookup(struct procmodel *m, int pid, unsigned long long start)
{
	struct pm_entry *e = pidtab_get(&m->tab, pid);

	if (e && !same_start(e->p.start_time, start)) {
		entry_remove(m, e);
		e = NULL;
	}
	return e;
}

/* Copy what /proc says (`src`, from procscan_read) into an entry. */
static void take_details(struct pm_entry *e, const struct pm_proc *src)
{
	struct pm_proc *p = &e->p;

	if (!p->start_time)
		p->start_time = src->start_time;
	if (!p->ppid)
		p->ppid = src->ppid;
	memcpy(p->nspid, src->nspid, sizeof(p->nspid));
	p->nslevels = src->nslevels;
	p->uid = src->uid;
	memcpy(p->comm, src->comm, sizeof(p->comm));
	memcpy(p->exe, src->exe, sizeof(p->exe));
	memcpy(p->cmdline, src->cmdline, sizeof(p->cmdline));
	memcpy(p->container, src->container, sizeof(p->container));
	memcpy(p->container_name, src->container_name, sizeof(p->container_name));
	p->cards = src->cards;
	p->complete = true;
	e->read_ns = clock_mono_ns();
}

/*
 * An exec event older than the entry's last /proc read: that read saw its
 * result (or a later exec's), so the event's exe and arguments would put
 * an older image back. Events wait in the ring while a card open's
 * confirmation reads /proc, so this happens under load (a wrapper such as
 * env exec'ing the job). A millisecond of margin keeps an exec racing the
 * read itself applied.
 */
#define STALE_EXEC_MARGIN_NS 1000000ULL
static bool exec_is_stale(const struct pm_entry *e, const struct dp_event *ev)
{
	return ev->ktime_ns && e->read_ns && ev->ktime_ns + STALE_EXEC_MARGIN_NS < e->read_ns;
}

/*
 * Read a partly known entry from /proc, its fds not read again when
 * `cards` were just now. 0, or -ESRCH (gone, or another process now).
 */
static int complete_entry_knowing(struct procmodel *m, struct pm_entry *e, const uint64_t *cards)
{
	struct pm_proc src;
	int err = procscan_read(e->p.pid, cards ? NULL : &m->cards, false, &src);

	if (err)
		return err;
	if (cards)
		src.cards = *cards;
	if (!same_start(e->p.start_time, src.start_time))
		return -ESRCH;
	take_details(e, &src);
	return 0;
}

static int complete_entry(struct procmodel *m, struct pm_entry *e)
{
	return complete_entry_knowing(m, e, NULL);
}

/* ---- sockets ------------------------------------------------------------------ */

/* Take a read socket state; true when the socket or its state changed. */
static bool set_socket(struct pm_entry *e, const struct sockstate *s)
{
	bool changed = e->p.socket_state != s->state || e->p.socket_flavour != (int)s->flavour ||
		       strcmp(e->p.socket, s->host_path) || strcmp(e->p.socket_inside, s->path);

	/* The home alone changes nothing a listener shows: taken silently. */
	if (!changed && !strcmp(e->p.home, s->home))
		return false;
	if (!e->sock && !(e->sock = malloc(sizeof(*e->sock))))
		return false; /* kept as it was; the next refresh tries again */
	snprintf(e->sock->host_path, sizeof(e->sock->host_path), "%s", s->host_path);
	snprintf(e->sock->inside, sizeof(e->sock->inside), "%s", s->path);
	snprintf(e->sock->home, sizeof(e->sock->home), "%s", s->home);
	e->p.socket = e->sock->host_path;
	e->p.socket_inside = e->sock->inside;
	e->p.home = e->sock->home;
	e->p.socket_state = s->state;
	e->p.socket_flavour = (int)s->flavour;
	return changed;
}

/* No card, no socket looked after (the home stays known). true when it changed. */
static bool forget_socket(struct pm_entry *e)
{
	bool changed = e->p.socket_state != PM_SOCKET_NONE || e->p.socket[0];

	e->p.socket_state = PM_SOCKET_NONE;
	if (e->sock)
		e->sock->host_path[0] = e->sock->inside[0] = '\0';
	return changed;
}

/* A soon look's table value: when (clock_ms) and the wait that led to it (never NULL). */
static void *soon_at(int64_t when_ms, int wait_ms)
{
	return (void *)(uintptr_t)(((uint64_t)when_ms << 8) | (uint64_t)wait_ms);
}

static int64_t soon_when(const void *v)
{
	return (int64_t)((uintptr_t)v >> 8);
}

static int soon_wait(const void *v)
{
	return (int)((uintptr_t)v & 0xff);
}

/*
 * Bring the socket up to date: looked for while the process holds a card,
 * forgotten when it holds none. true when it changed. A failed read keeps
 * what was known (the process is exiting, or its table was unreadable).
 */
static bool update_socket(struct procmodel *m, struct pm_entry *e)
{
	struct sockstate *s;
	bool changed = false;

	if (!e->p.cards)
		return forget_socket(e);
	/* ~12 KiB: off the stack. */
	s = malloc(sizeof(*s));
	if (!s)
		return false;
	if (sockstate_read(e->p.pid, s) == 0) {
		changed = set_socket(e, s);
		e->p.socket_read_ms = clock_ms();
		if (e->p.socket_state == PM_SOCKET_NONE && !e->soon_done && !e->served) {
			e->soon_done = true;
			if (pidtab_put(&m->soon, e->p.pid,
				       soon_at(clock_ms() + PM_SOCKET_SOON_MS, PM_SOCKET_SOON_MS))) {
				/* Out of memory: the pass finds its socket. */
			}
		}
	}
	free(s);
	return changed;
}

/* Tell what differs between the cards before (`old`) and now. */
static void notify_cards(struct procmodel *m, struct pm_entry *e, uint64_t old)
{
	if (e->p.cards & ~old)
		notify(m, PM_CHANGE_CARD_OPEN, e);
	if (old & ~e->p.cards)
		notify(m, PM_CHANGE_CARD_CLOSE, e);
}

/* Does slot i hold a card user? */
static bool holder_at(const struct procmodel *m, size_t i)
{
	const struct pm_entry *e = pidtab_slot(&m->tab, i)->val;

	return pidtab_slot(&m->tab, i)->pid && e->p.cards;
}

/* The card user at slot i re-checked. */
/*
 * When the periodic pass looks at a holder's socket again. A socket that
 * listens or is connected and stays so is looked at less and less often
 * (100 ms doubling to 1.6 s): with hundreds of served targets the pass
 * held a fifth of a CPU re-reading what did not change. A holder without
 * a socket is looked at every pass: its socket appearing is what makes a
 * job joinable (no kernel event tells). Any change starts over.
 */
static void next_look(struct pm_entry *e, bool changed, int64_t now)
{
	if (changed || e->p.socket_state == PM_SOCKET_NONE || !e->sock_wait_ms)
		e->sock_wait_ms = PM_SOCKET_LOOK_MS;
	else if (e->sock_wait_ms < PM_SOCKET_LOOK_MAX_MS)
		e->sock_wait_ms *= 2;
	e->sock_next_ms = now + e->sock_wait_ms;
}

static void refresh_slot(struct procmodel *m, size_t i)
{
	struct pm_entry *e = pidtab_slot(&m->tab, i)->val;
	bool changed;

	if (!e->p.complete && complete_entry(m, e))
		return; /* gone: its EXIT (or the next scan) removes it */
	changed = update_socket(m, e);
	next_look(e, changed, clock_ms());
	if (changed)
		notify(m, PM_CHANGE_SOCKET, e);
}

/* Due for the periodic pass (holders only). */
static bool look_due(const struct procmodel *m, size_t i, int64_t now)
{
	const struct pm_entry *e = pidtab_slot(&m->tab, i)->val;

	return holder_at(m, i) && !e->served && e->sock_next_ms <= now;
}

void procmodel_set_served(struct procmodel *m, int pid, bool served)
{
	struct pm_entry *e = pidtab_get(&m->tab, pid);

	if (!e || e->served == served)
		return;
	e->served = served;
	if (!served) { /* its socket may have changed meanwhile: looked at soon, as a new one */
		e->sock_wait_ms = 0;
		e->sock_next_ms = 0;
	}
}

#define SOON_BATCH 64 /* due ones taken per call; more wait for the next round */

/* One soon look at pid (its value v): the next one planned, or it leaves the table. */
static void look_soon_at(struct procmodel *m, int pid, const void *v, int64_t now)
{
	struct pm_entry *e = pidtab_get(&m->tab, pid);
	bool changed;

	if (!e || !e->p.cards || e->served) {
		pidtab_del(&m->soon, pid);
		return;
	}
	changed = update_socket(m, e);
	if (e->p.socket_state != PM_SOCKET_NONE || soon_wait(v) * 2 > PM_SOCKET_LOOK_MS ||
	    pidtab_put(&m->soon, pid, soon_at(now + soon_wait(v) * 2, soon_wait(v) * 2)))
		pidtab_del(&m->soon, pid);
	if (changed)
		notify(m, PM_CHANGE_SOCKET, e);
}

void procmodel_look_soon(struct procmodel *m, int64_t now)
{
	struct pidtab_slot due[SOON_BATCH];
	int n = 0;

	/* Collected first: the table may not change while it is walked. */
	for (size_t i = 0; m->soon.count && i < pidtab_cap(&m->soon) && n < SOON_BATCH; i++)
		if (pidtab_slot(&m->soon, i)->pid > 0 && soon_when(pidtab_slot(&m->soon, i)->val) <= now)
			due[n++] = *pidtab_slot(&m->soon, i);
	for (int i = 0; i < n; i++)
		look_soon_at(m, due[i].pid, due[i].val, now);
}

int64_t procmodel_soon_next_ms(const struct procmodel *m)
{
	int64_t next = INT64_MAX;

	for (size_t i = 0; m->soon.count && i < pidtab_cap(&m->soon); i++)
		if (pidtab_slot(&m->soon, i)->pid > 0 && soon_when(pidtab_slot(&m->soon, i)->val) < next)
			next = soon_when(pidtab_slot(&m->soon, i)->val);
	return next;
}

void procmodel_refresh_sockets(struct procmodel *m)
{
	for (size_t i = 0; i < pidtab_cap(&m->tab); i++)
		if (holder_at(m, i))
			refresh_slot(m, i);
}

bool procmodel_refresh_sockets_until(struct procmodel *m, size_t *cursor, int64_t until_ms)
{
	bool one = false;
	size_t end = *cursor + PROCMODEL_PASS_SLOTS; /* procmodel.h: a slice's slots */
	int64_t now = clock_ms();

	/* The table may have grown or shrunk since the last slice: a pass may see a holder twice or miss one till the next. */
	for (; *cursor < pidtab_cap(&m->tab); (*cursor)++) {
		if (*cursor >= end)
			return false;
		if (!look_due(m, *cursor, now))
			continue;
		if (one && clock_ms() >= until_ms)
			return false;
		refresh_slot(m, *cursor);
		one = true;
	}
	*cursor = 0;
	return true;
}

void procmodel_recheck_cards(struct procmodel *m, int pid)
{
	struct pm_entry *e = pidtab_get(&m->tab, pid);
	uint64_t old, cards;

	if (!e || !e->p.complete || procscan_cards(pid, e->p.start_time, &m->cards, -1, &cards))
		return;
	old = e->p.cards;
	e->p.cards = cards;
	notify_cards(m, e, old);
	if (update_socket(m, e))
		notify(m, PM_CHANGE_SOCKET, e);
}

/* ---- scan ---------------------------------------------------------------------- */

/* A process seen again by a scan: take what /proc says, tell what changed. */
static void scan_update(struct procmodel *m, struct pm_entry *e, const struct pm_proc *src)
{
	bool exec = strcmp(e->p.exe, src->exe) || strcmp(e->p.cmdline, src->cmdline);
	uint64_t old = e->p.cards;

	take_details(e, src);
	e->gen = m->gen;
	if (exec)
		notify(m, PM_CHANGE_EXEC, e);
	notify_cards(m, e, old);
	if (update_socket(m, e))
		notify(m, PM_CHANGE_SOCKET, e);
}

/* What a quick read cannot tell apart from the entry: its exec and its cards. */
static bool quick_differs(const struct pm_entry *e, const struct pm_proc *src)
{
	return strcmp(e->p.exe, src->exe) || strcmp(e->p.cmdline, src->cmdline) ||
	       strcmp(e->p.comm, src->comm) || e->p.cards != src->cards;
}

/*
 * Read a process for the scan. A known, unchanged process needs no status
 * or cgroup (its pid namespaces never change; its uid and cgroup change
 * in practice at exec, as runc and su do): those keep the entry's values.
 */
static int scan_read(struct procmodel *m, const struct pm_entry *e, int pid, struct pm_proc *src)
{
	int err;

	if (e && e->p.complete) {
		err = procscan_read(pid, &m->cards, true, src);
		if (err || !same_start(e->p.start_time, src->start_time))
			return err ? err : procscan_read(pid, &m->cards, false, src);
		if (!quick_differs(e, src)) {
			src->ppid = e->p.ppid;
			memcpy(src->nspid, e->p.nspid, sizeof(src->nspid));
			src->nslevels = e->p.nslevels;
			src->uid = e->p.uid;
			memcpy(src->container, e->p.container, sizeof(src->container));
			memcpy(src->container_name, e->p.container_name, sizeof(src->container_name));
			return 0;
		}
	}
	return procscan_read(pid, &m->cards, false, src);
}

static void scan_pid(struct procmodel *m, int pid)
{
	struct pm_proc src;
	struct pm_entry *e = pidtab_get(&m->tab, pid);
	int err = scan_read(m, e, pid, &src);

	if (err == -ESRCH)
		return; /* gone (or a zombie): dropped below if known */
	if (err) {
		if (e)
			e->gen = m->gen; /* unreadable for now: kept as known */
		return;
	}
	if (e && !same_start(e->p.start_time, src.start_time)) {
		entry_remove(m, e);
		e = NULL;
	}
	if (e) {
		scan_update(m, e, &src);
		return;
	}
	e = entry_new(pid);
	if (!e)
		return;
	take_details(e, &src);
	update_socket(m, e);
	entry_add(m, e);
}

/* Entries the scan did not see: exited (or zombies). */
static int drop_unseen(struct procmodel *m)
{
	struct pm_entry **gone;
	size_t n = 0;

	if (!m->tab.count)
		return 0;
	gone = malloc(m->tab.count * sizeof(*gone));
	if (!gone)
		return -ENOMEM;
	for (size_t i = 0; i < pidtab_cap(&m->tab); i++) {
		struct pm_entry *e = pidtab_slot(&m->tab, i)->val;

		if (pidtab_slot(&m->tab, i)->pid && e->gen != m->gen)
			gone[n++] = e;
	}
	for (size_t i = 0; i < n; i++)
		entry_remove(m, gone[i]);
	free(gone);
	return 0;
}

static int pid_of_name(const char *name)
{
	int v;

	return decimal_int(name, 0, INT_MAX, &v) ? -1 : v;
}

int procmodel_scan(struct procmodel *m)
{
	struct dirent *de;
	int seen = 0, err;
	DIR *d;

	/* Card nodes may have appeared (a driver loaded) since the last look. */
	err = carddevs_glob(&m->devs, &m->patterns);
	if (err)
		return err;
	d = opendir("/proc");
	if (!d)
		return -errno;
	m->gen++;
	while (seen < PM_SCAN_MAX && (de = readdir(d))) {
		int pid = pid_of_name(de->d_name);

		if (pid <= 0)
			continue;
		seen++;
		scan_pid(m, pid);
	}
	closedir(d);
	return drop_unseen(m);
}

/* ---- kernel events ---------------------------------------------------------------- */

static void event_comm(char *dst, size_t len, const struct dp_event *ev)
{
	snprintf(dst, len, "%.*s", (int)sizeof(ev->comm), ev->comm);
}

/* An entry made from an event alone (not read from /proc). */
static struct pm_entry *entry_from_event(struct procmodel *m, const struct dp_event *ev)
{
	struct pm_entry *e = entry_new((int)ev->pid);

	if (!e)
		return NULL;
	e->p.start_time = procscan_ns_to_ticks(ev->start_ns, m->hz);
	e->p.ppid = (int)ev->ppid;
	e->p.uid = ev->uid;
	event_comm(e->p.comm, sizeof(e->p.comm), ev);
	return e;
}

static void apply_fork(struct procmodel *m, const struct dp_event *ev)
{
	unsigned long long start = procscan_ns_to_ticks(ev->start_ns, m->hz);
	struct pm_entry *e = lookup(m, (int)ev->pid, start), *parent;

	if (e)
		return; /* already known (a scan raced the event) */
	e = entry_from_event(m, ev);
	if (!e)
		return;
	/* A child inherits its parent's image, cgroup and every fd. */
	parent = pidtab_get(&m->tab, (int)ev->ppid);
	if (parent) {
		/* A bare event (the process connector) has no uid or comm:
		   the child has its parent's until it execs. */
		if (!ev->start_ns) {
			e->p.uid = parent->p.uid;
			memcpy(e->p.comm, parent->p.comm, sizeof(e->p.comm));
		}
		memcpy(e->p.exe, parent->p.exe, sizeof(e->p.exe));
		memcpy(e->p.cmdline, parent->p.cmdline, sizeof(e->p.cmdline));
		memcpy(e->p.container, parent->p.container, sizeof(e->p.container));
		memcpy(e->p.container_name, parent->p.container_name, sizeof(e->p.container_name));
		e->p.cards = parent->p.cards;
	}
	/* Card holders are read at once; others stay cheap until they matter. */
	if (e->p.cards && complete_entry(m, e) == 0)
		update_socket(m, e);
	entry_add(m, e);
}

/*
 * A bare EXEC (the process connector: pid only): everything from /proc,
 * as a scan reads it, but told as an exec even when exe and cmdline are
 * the same. Nothing when the process is gone already (its EXIT follows).
 */
static void apply_bare_exec(struct procmodel *m, const struct dp_event *ev)
{
	struct pm_proc src;
	struct pm_entry *e;
	uint64_t old;

	if (procscan_read((int)ev->pid, &m->cards, false, &src))
		return;
	e = lookup(m, (int)ev->pid, src.start_time);
	if (!e) {
		e = entry_new((int)ev->pid);
		if (!e)
			return;
		take_details(e, &src);
		update_socket(m, e);
		entry_add(m, e);
		return;
	}
	old = e->p.cards;
	take_details(e, &src);
	notify(m, PM_CHANGE_EXEC, e);
	notify_cards(m, e, old);
	if (update_socket(m, e))
		notify(m, PM_CHANGE_SOCKET, e);
}

static void apply_exec(struct procmodel *m, const struct dp_event *ev)
{
	unsigned long long start = procscan_ns_to_ticks(ev->start_ns, m->hz);
	struct pm_entry *e = lookup(m, (int)ev->pid, start);
	size_t alen = ev->args_len < sizeof(ev->args) ? ev->args_len : sizeof(ev->args);
	bool fresh = !e;
	uint64_t old, cards;

	if (fresh && !(e = entry_from_event(m, ev)))
		return;
	if (!fresh && exec_is_stale(e, ev))
		return;
	/* /proc's exe, as a scan reads it (absolute, a script's interpreter). */
	if (procscan_exe(e->p.pid, e->p.exe, sizeof(e->p.exe)))
		snprintf(e->p.exe, sizeof(e->p.exe), "%.*s", (int)sizeof(ev->path), ev->path);
	procscan_join_args(ev->args, alen, e->p.cmdline, sizeof(e->p.cmdline));
	event_comm(e->p.comm, sizeof(e->p.comm), ev);
	e->p.uid = ev->uid;
	if (fresh) {
		entry_add(m, e);
		return;
	}
	old = e->p.cards;
	/* Card fds opened O_CLOEXEC closed with the old image. */
	if (old && procscan_cards(e->p.pid, e->p.start_time, &m->cards, -1, &cards) == 0)
		e->p.cards = cards;
	notify(m, PM_CHANGE_EXEC, e);
	notify_cards(m, e, old);
	if (old && update_socket(m, e))
		notify(m, PM_CHANGE_SOCKET, e);
}

static void apply_exit(struct procmodel *m, const struct dp_event *ev)
{
	struct pm_entry *e = pidtab_get(&m->tab, (int)ev->pid);

	if (e && same_start(e->p.start_time, procscan_ns_to_ticks(ev->start_ns, m->hz)))
		entry_remove(m, e);
}

/* The event's card: the kernel's index, the device number, the path's number. */
static int event_card(const struct procmodel *m, const struct dp_event *ev)
{
	char path[sizeof(ev->path) + 1];
	int index = ev->card;

	if (index < 0 || index > PM_MAX_CARD_INDEX)
		index = carddevs_lookup(&m->devs, makedev(ev->rdev_major, ev->rdev_minor));
	if (index < 0) {
		snprintf(path, sizeof(path), "%.*s", (int)sizeof(ev->path), ev->path);
		index = cards_match(&m->patterns, path);
	}
	return index >= 0 && index <= PM_MAX_CARD_INDEX ? index : -1;
}

/* cards: the process's fds as read just now (procmodel_confirm_open), NULL: not read yet. */
static void apply_card_open_knowing(struct procmodel *m, const struct dp_event *ev, const uint64_t *cards)
{
	unsigned long long start = procscan_ns_to_ticks(ev->start_ns, m->hz);
	struct pm_entry *e = lookup(m, (int)ev->pid, start);
	int index = event_card(m, ev);
	uint64_t bit = index >= 0 ? 1ULL << index : 0, old;

	if (!e) {
		e = entry_from_event(m, ev);
		if (!e)
			return;
		complete_entry_knowing(m, e, cards); /* best effort: it may be gone already */
		e->p.cards |= bit;
		update_socket(m, e);
		entry_add(m, e);
		return;
	}
	old = e->p.cards;
	/* The fd may be closed already: the event's bit counts until CARD_CLOSE. */
	if (!e->p.complete)
		complete_entry_knowing(m, e, cards);
	/*
	 * Its first card: its container read again. A process may change its
	 * cgroup without an exec (an entrypoint script joining its container's
	 * cgroup, then opening the card); the one read at its exec would name
	 * no container (seen under load).
	 */
	else if (!old && procscan_container(&e->p) == -ESRCH)
		return;
	e->p.cards |= bit;
	notify_cards(m, e, old);
	if (!old && update_socket(m, e))
		notify(m, PM_CHANGE_SOCKET, e);
}

static void apply_card_open(struct procmodel *m, const struct dp_event *ev)
{
	apply_card_open_knowing(m, ev, NULL);
}

static void apply_card_close(struct procmodel *m, const struct dp_event *ev)
{
	struct pm_entry *e = pidtab_get(&m->tab, (int)ev->pid);
	uint64_t old, cards;
	int err, index;

	if (!e || !same_start(e->p.start_time, procscan_ns_to_ticks(ev->start_ns, m->hz)))
		return;
	old = e->p.cards;
	err = procscan_cards(e->p.pid, e->p.start_time, &m->cards, ev->fd, &cards);
	if (err == -ESRCH)
		return; /* exiting: its EXIT removes it */
	if (err) {
		/* fds not readable: trust the event alone. */
		index = event_card(m, ev);
		cards = index >= 0 ? old & ~(1ULL << index) : old;
	}
	e->p.cards = cards;
	notify_cards(m, e, old);
	if (!cards && update_socket(m, e))
		notify(m, PM_CHANGE_SOCKET, e);
}

int procmodel_confirm_open(struct procmodel *m, const struct dp_event *ev)
{
	unsigned long long start = procscan_ns_to_ticks(ev->start_ns, m->hz);
	const struct pm_entry *e;
	int index, err;
	uint64_t cards;

	if (ev->type != DP_EVENT_CARD_OPEN || ev->fd != DP_FD_UNCONFIRMED || (int)ev->pid <= 0)
		return -EINVAL;
	index = event_card(m, ev);
	if (index < 0)
		return 0; /* not a card we know (any more) */
	e = lookup(m, (int)ev->pid, start);
	if (e && (e->p.cards & (1ULL << index)))
		return 1; /* holds it already: another open changes nothing */
	err = procscan_cards((int)ev->pid, start, &m->cards, -1, &cards);
	if (err)
		return err;
	if (!(cards & (1ULL << index)))
		return 0;
	apply_card_open_knowing(m, ev, &cards); /* its fds not walked a second time */
	return 1;
}

/* The card user at slot i: its fds read again, a card closed (or opened) told. */
static void recheck_slot_cards(struct procmodel *m, size_t i)
{
	struct pm_entry *e = pidtab_slot(&m->tab, i)->val;
	uint64_t old, cards;

	if (procscan_cards(e->p.pid, e->p.start_time, &m->cards, -1, &cards))
		return; /* gone (its EXIT removes it) or unreadable: as it was */
	old = e->p.cards;
	e->p.cards = cards;
	notify_cards(m, e, old);
	if (!cards && update_socket(m, e))
		notify(m, PM_CHANGE_SOCKET, e);
}

bool procmodel_refresh_cards_until(struct procmodel *m, size_t *cursor, int64_t until_ms)
{
	bool one = false;
	size_t end = *cursor + PROCMODEL_PASS_SLOTS;

	for (; *cursor < pidtab_cap(&m->tab); (*cursor)++) {
		const struct pm_entry *e = pidtab_slot(&m->tab, *cursor)->val;

		if (*cursor >= end)
			return false;
		/* A served one's cards are the session's to know until it lets it go (then the next pass). */
		if (!holder_at(m, *cursor) || e->served)
			continue;
		if (one && clock_ms() >= until_ms)
			return false;
		recheck_slot_cards(m, *cursor);
		one = true;
	}
	*cursor = 0;
	return true;
}

void procmodel_apply(struct procmodel *m, const struct dp_event *ev)
{
	if ((int)ev->pid <= 0)
		return;
	switch (ev->type) {
	case DP_EVENT_FORK:
		apply_fork(m, ev);
		break;
	case DP_EVENT_EXEC:
		if (ev->start_ns)
			apply_exec(m, ev);
		else
			apply_bare_exec(m, ev);
		break;
	case DP_EVENT_EXIT:
		apply_exit(m, ev);
		break;
	case DP_EVENT_CARD_OPEN:
		/* Only what the fds confirm now; tracker.c retries the rest (opencheck.c). */
		if (ev->fd == DP_FD_UNCONFIRMED) {
			if (procmodel_confirm_open(m, ev) < 0) { /* not a card user (yet) */
			}
		} else {
			apply_card_open(m, ev);
		}
		break;
	case DP_EVENT_CARD_CLOSE:
		apply_card_close(m, ev);
		break;
	default:
		break;
	}
}

/* ---- look-ups ---------------------------------------------------------------------- */

const struct pm_proc *procmodel_get(const struct procmodel *m, int pid)
{
	const struct pm_entry *e = pidtab_get(&m->tab, pid);

	return e ? &e->p : NULL;
}

void procmodel_foreach(const struct procmodel *m, void (*fn)(void *ctx, const struct pm_proc *p),
		       void *ctx)
{
	for (size_t i = 0; i < pidtab_cap(&m->tab); i++) {
		const struct pidtab_slot *s = pidtab_slot(&m->tab, i);

		if (s->pid)
			fn(ctx, &((const struct pm_entry *)s->val)->p);
	}
}

size_t procmodel_count(const struct procmodel *m)
{
	return m->tab.count;
}

size_t procmodel_slots(const struct procmodel *m)
{
	return pidtab_cap(&m->tab);
}

bool procmodel_descends_from(const struct procmodel *m, int pid, int ancestor)
{
	const struct pm_proc *p = procmodel_get(m, pid);

	for (int steps = 0; p && steps < PM_ANCESTRY_MAX; steps++) {
		const struct pm_proc *parent;

		if (p->pid == ancestor)
			return true;
		if (p->ppid <= 0 || p->ppid == p->pid)
			break;
		parent = procmodel_get(m, p->ppid);
		/* A parent younger than its child is a later process on a reused pid. */
		if (parent && parent->start_time && p->start_time && parent->start_time > p->start_time)
			break;
		p = parent;
	}
	return false;
}

int procmodel_refresh_card_devs(struct procmodel *m)
{
	struct card_devs before = m->devs;
	int err = carddevs_glob(&m->devs, &m->patterns);

	if (err)
		return err;
	return before.count != m->devs.count ||
	       memcmp(before.devs, m->devs.devs, (size_t)before.count * sizeof(before.devs[0])) != 0;
}

int procmodel_card_devs(const struct procmodel *m, struct dp_card_dev *devs, int *index, int max)
{
	int n = 0;

	for (int i = 0; i < m->devs.count && n < max; i++, n++) {
		devs[n].major = m->devs.devs[i].major;
		devs[n].minor = m->devs.devs[i].minor;
		index[n] = m->devs.devs[i].index;
	}
	return n;
}
