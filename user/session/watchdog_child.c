// SPDX-License-Identifier: MIT
/*
 * The watchdog process (see watchdog.h): it waits for dynprof to die, then
 * ends the windows dynprof left open. Syscalls only, no malloc, no stdio:
 * it is a copy of a process that may have had other threads, whose locks
 * it may hold in its copy of memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/fdpass.h"
#include "common/proctitle.h"
#include "dynprof/proto.h"
#include "shared/clock.h"
#include "shared/fdio.h"
#include "session/watchdog.h"
#include "session/watchdog_impl.h"

#define SEND_MS 1000      /* one message into a socket whose reader is alive */
#define QUIT_WAIT_MS 5000 /* at most, for the QUIT replies (STOPs get --timeout) */
#define DISCARD_MAX 64    /* reads of what dynprof left unread, at most */

struct entry {
	int fd; /* our copy + 1; 0: not held */
	int pid;
	int proto;
	int open;    /* a window may be open */
	size_t want; /* reply bytes still awaited */
	int replied;
};

static struct entry *tab; /* indexed by key (dynprof's fd number), grown by mremap */
static size_t cap;        /* entries in tab */
static struct pollfd *pfds;
static size_t pfd_cap;

/* ---- lines on stderr, formatted by hand -------------------------------- */

struct line {
	char buf[256];
	size_t len;
};

static void put(struct line *l, const char *s)
{
	while (*s && l->len < sizeof(l->buf) - 1)
		l->buf[l->len++] = *s++;
}

static void put_int(struct line *l, long v)
{
	char d[24];
	int n = 0;

	if (v < 0) {
		put(l, "-");
		v = -v;
	}
	do
		d[n++] = (char)('0' + v % 10);
	while ((v /= 10) && n < (int)sizeof(d));
	while (n > 0 && l->len < sizeof(l->buf) - 1)
		l->buf[l->len++] = d[--n];
}

static void emit(struct line *l)
{
	put(l, "\n");
	if (write(2, l->buf, l->len) < 0) {
		/* Nobody to tell: stderr is gone with dynprof's terminal. */
	}
}

/* ---- the table ---------------------------------------------------------- */

/* Room for `n` items of `size` in a mapping grown by doubling; 0 or -1. */
static int grow(void **mem, size_t *have, size_t n, size_t size)
{
	size_t want = *have ? *have : 64;
	void *p;

	if (n <= *have)
		return 0;
	while (want < n)
		want *= 2;
	if (*mem)
		p = mremap(*mem, *have * size, want * size, MREMAP_MAYMOVE);
	else
		p = mmap(NULL, want * size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	memset((char *)p + *have * size, 0, (want - *have) * size); /* mremap's new part is zero too */
	*mem = p;
	*have = want;
	return 0;
}

static struct entry *slot(int key)
{
	if (key < 0 || grow((void **)&tab, &cap, (size_t)key + 1, sizeof(*tab)))
		return NULL;
	return &tab[key];
}

static void forget(struct entry *e)
{
	if (e->fd)
		close(e->fd - 1);
	memset(e, 0, sizeof(*e));
}

/* ---- after dynprof's death ---------------------------------------------- */

static size_t reply_size(const struct entry *e)
{
	return e->proto == PROTO_V1 ? sizeof(struct proto_v1_response) : sizeof(struct proto_v2_msg);
}

/* A reply dynprof did not live to read is not the answer to ours. */
static void discard_unread(int fd)
{
	char buf[512];

	for (int i = 0; i < DISCARD_MAX; i++)
		if (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) <= 0)
			return;
}

static void send_command(struct entry *e, enum proto_command cmd)
{
	union {
		struct proto_v1_request v1;
		struct proto_v2_msg v2;
	} m;
	size_t len;

	if (e->proto == PROTO_V1) {
		if (proto_v1_encode_request(&m.v1, proto_v1_request_type(cmd), NULL) < 0)
			return;
		len = sizeof(m.v1);
	} else {
		len = proto_v2_encode_request(&m.v2, cmd);
	}
	e->replied = 0;
	e->want = fdio_write_full(e->fd - 1, &m, len, clock_ms() + SEND_MS) ? 0 : reply_size(e);
}

/* Read the replies of every entry that awaits one, until all came or `deadline`. */
static void await_replies(int64_t deadline)
{
	char buf[PROTO_MAX_WIRE_SIZE];

	for (;;) {
		size_t n = 0;
		int rc;

		for (size_t k = 0; k < cap; k++) {
			if (!tab[k].want)
				continue;
			if (grow((void **)&pfds, &pfd_cap, n + 1, sizeof(*pfds)))
				return;
			pfds[n++] = (struct pollfd){ .fd = tab[k].fd - 1, .events = POLLIN };
		}
		if (!n)
			return;
		rc = poll(pfds, n, clock_ms_left(deadline));
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc <= 0)
			return;
		for (size_t k = 0, i = 0; k < cap && i < n; k++) {
			struct entry *e = &tab[k];
			ssize_t got;

			if (!e->want || pfds[i++].revents == 0)
				continue;
			got = recv(e->fd - 1, buf, e->want < sizeof(buf) ? e->want : sizeof(buf),
				   MSG_DONTWAIT);
			if (got < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			if (got <= 0) {
				e->want = 0; /* closed: the server is gone or ended it */
				continue;
			}
			e->want -= (size_t)got;
			e->replied = e->want == 0;
		}
	}
}

static void say_ended(const struct entry *e, pid_t parent)
{
	struct line l = { .len = 0 };

	put(&l, "[WARNING] dynprof watchdog: dynprof (pid ");
	put_int(&l, parent);
	put(&l, ") ended with a window open in pid ");
	put_int(&l, e->pid);
	put(&l, e->replied ? ": sent STOP (answered) and QUIT" : ": sent STOP (no answer) and QUIT");
	emit(&l);
}

/* STOP to every connection with a window, then QUIT to all; every wait bounded. */
static void end_windows(pid_t parent, int timeout_ms)
{
	int opened = 0;

	for (size_t k = 0; k < cap; k++)
		if (tab[k].fd && tab[k].open) {
			discard_unread(tab[k].fd - 1);
			send_command(&tab[k], PROTO_CMD_STOP);
			opened = 1;
		}
	if (opened)
		await_replies(clock_ms() + timeout_ms);
	for (size_t k = 0; k < cap; k++)
		if (tab[k].fd && tab[k].open)
			say_ended(&tab[k], parent);
	for (size_t k = 0; k < cap; k++)
		if (tab[k].fd) {
			if (!tab[k].open)
				discard_unread(tab[k].fd - 1);
			send_command(&tab[k], PROTO_CMD_QUIT);
		}
	/* v1 closes after its QUIT_RSP (and DISCONN_RSP); 9.x waits for our close. */
	await_replies(clock_ms() + (timeout_ms < QUIT_WAIT_MS ? timeout_ms : QUIT_WAIT_MS));
	for (size_t k = 0; k < cap; k++)
		forget(&tab[k]);
}

/* ---- while dynprof lives ------------------------------------------------ */

static void on_message(int chan, const struct wd_msg *m, int fd)
{
	struct entry *e = slot(m->key);

	if (!e) {
		if (fd >= 0)
			close(fd);
		return;
	}
	switch (m->op) {
	case WD_HOLD:
		forget(e);
		if (fd < 0)
			return; /* out of fds: this target is not watched */
		*e = (struct entry){ .fd = fd + 1, .pid = m->pid, .proto = m->proto };
		return;
	case WD_OPEN:
	case WD_CLOSED:
		e->open = e->fd && m->op == WD_OPEN;
		break;
	case WD_RELEASE:
		forget(e);
		if (send(chan, m, sizeof(*m), MSG_NOSIGNAL) < 0) {
			/* dynprof is gone: the next read says so. */
		}
		break;
	}
	if (fd >= 0)
		close(fd);
}

/* 1: keep serving; 0: dynprof is gone; -1: told done. */
static int serve_one(int chan)
{
	struct wd_msg m;
	int fd;
	ssize_t n = fdpass_recv(chan, &m, sizeof(m), MSG_DONTWAIT, &fd);

	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 1 : 0;
	if (n == 0) {
		if (fd >= 0)
			close(fd);
		return 0; /* the end of the pair: dynprof's last copy of it closed */
	}
	if (n != (ssize_t)sizeof(m)) {
		if (fd >= 0)
			close(fd);
		return 1;
	}
	if (m.op == WD_DONE) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	on_message(chan, &m, fd);
	return 1;
}

/* Wait for messages until dynprof dies (0) or says done (-1). */
static int serve(int chan, pid_t parent)
{
	int pidfd = (int)syscall(SYS_pidfd_open, parent, 0);

	/* Dead before the pidfd was made: the pidfd is of whoever has the pid now. */
	if (getppid() != parent)
		return 0;
	for (;;) {
		struct pollfd p[2] = {
			{ .fd = chan, .events = POLLIN }, { .fd = pidfd, .events = POLLIN }, /* ignored when -1 */
		};
		/* Without a pidfd (before 5.3), the parent checked every second. */
		int n = poll(p, 2, pidfd >= 0 ? -1 : 1000), rc;

		if (n < 0 && errno != EINTR)
			return 0;
		if (n > 0 && p[0].revents) {
			rc = serve_one(chan);
			if (rc <= 0)
				return rc;
			continue;
		}
		if ((n > 0 && p[1].revents) || getppid() != parent)
			return 0;
	}
}

/* Only our end of the pair stays (as fd 3), stdin and stdout on /dev/null, stderr kept for our lines. */
static int tidy_fds(int chan)
{
	int null;

	if (chan != 3 && dup2(chan, 3) < 0)
		return chan;
	if (syscall(SYS_close_range, 4U, ~0U, 0U) < 0)
		for (int fd = 4; fd < 4096; fd++)
			close(fd);
	null = open("/dev/null", O_RDWR);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		if (null > 3)
			close(null);
	}
	return 3;
}

/*
 * Not dynprof's command line: a user or script that signals "dynprof" by
 * its command line (pkill -f, pgrep -f) must not reach the watchdog.
 */
static void set_title(pid_t parent)
{
	struct line l = { .len = 0 };

	put(&l, WATCHDOG_COMM ": watchdog of dynprof pid ");
	put_int(&l, parent);
	l.buf[l.len] = '\0'; /* put() keeps a byte free */
	if (proctitle_set(l.buf)) {
		/* Kept as it was: ps shows dynprof's line, comm still says dynprof-wd. */
	}
}

/* Signals meant for dynprof's process group (a terminal's Ctrl-C) are not for us. */
static void ignore_signals(void)
{
	static const int sigs[] = { SIGINT,  SIGTERM, SIGHUP,  SIGQUIT, SIGPIPE, SIGTSTP,
				    SIGTTIN, SIGTTOU, SIGUSR1, SIGUSR2, SIGALRM };
	struct sigaction sa = { .sa_handler = SIG_IGN };

	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

void watchdog_child_main(int chan, pid_t parent, int timeout_ms)
{
	struct rlimit rl;

	prctl(PR_SET_NAME, WATCHDOG_COMM, 0, 0, 0);
	set_title(parent);
	ignore_signals();
	chan = tidy_fds(chan);
	if (chdir("/")) {
		/* Holding the folder dynprof ran in busy is harmless. */
	}
	/* dynprof may raise its own fd limit later: room for a copy of every connection. */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (serve(chan, parent) == 0)
		end_windows(parent, timeout_ms);
	_exit(0);
}
