// SPDX-License-Identifier: MIT
/* --control: command lines over a FIFO or a unix socket (see control.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "control/control.h"
#include "control/stream.h"
#include "common/errbuf.h"
#include "report/events_out.h"
#include "shared/clock.h"
#include "report/report.h"

#define CONTROL_BACKLOG 16
#define CONTROL_SNDBUF (4 << 20) /* bytes a client's replies may queue (the kernel doubles it) */
#define ACCEPT_BURST 32          /* accepts per event, so a flood cannot starve the rest */
#define REFUSED_QUIET_MS 10000   /* after a refusal is told, the next ones are counted this long */

static const char too_many_msg[] = "error: too many control clients\n";

/* Bytes of a line not yet ended by its newline. */
struct linebuf {
	char data[CONTROL_LINE_MAX];
	size_t len;
	bool discarding; /* inside an over-long line: skip to its newline */
};

struct client {
	int fd; /* -1: free slot */
	int id;
	bool eof; /* it shut down its sending side; replies still go out */
	struct linebuf in;
	struct stream_queue *stream; /* `events`: its queue; NULL while it sends commands */
};

/* A file named on the command line, and whether we made it. */
struct named_file {
	char *path;
	dev_t dev;
	ino_t ino;
	bool ours; /* made by us: removed at close if still the same file */
};

struct control {
	bool is_unix;
	int fd;     /* the CTL FIFO, or the listening socket */
	int ack_fd; /* FIFO mode: the ACK FIFO, or -1 */
	struct named_file ctl_file, ack_file;
	struct linebuf fifo_in;
	struct client clients[CONTROL_MAX_CLIENTS];
	int next_id;
	bool listening; /* our events listener is set (some client streams) */
	/*
	 * Refused clients: the first is told whole, then one line a
	 * REFUSED_QUIET_MS at most counts the others, so that a user who
	 * connects in a loop cannot flood the monitor's output.
	 */
	struct {
		int64_t told_ms; /* the last warning line; 0 none yet */
		unsigned untold; /* refused since, not told */
		struct ucred last;
	} refused;
};

static void update_listener(struct control *ctl);

/* One error line into err, "--control: " first; -1 for the caller to pass on. */
#define fail(err, errlen, fmt, ...) errbuf_set(err, errlen, "--control: " fmt, ##__VA_ARGS__)

/* ---- clients ----------------------------------------------------------------- */

static struct client *client_by_id(struct control *ctl, int id)
{
	for (int i = 0; i < CONTROL_MAX_CLIENTS; i++)
		if (ctl->clients[i].fd >= 0 && ctl->clients[i].id == id)
			return &ctl->clients[i];
	return NULL;
}

static struct client *client_by_fd(struct control *ctl, int fd)
{
	for (int i = 0; i < CONTROL_MAX_CLIENTS; i++)
		if (ctl->clients[i].fd == fd)
			return &ctl->clients[i];
	return NULL;
}

/* Ids count up and wrap, skipping live ones: a reply meant for a client
 * that left can never reach the one that took its slot. */
static int new_id(struct control *ctl)
{
	int id;

	do {
		id = ctl->next_id;
		ctl->next_id = id == INT_MAX ? 1 : id + 1;
	} while (client_by_id(ctl, id));
	return id;
}

static void drop_client(struct client *c)
{
	close(c->fd);
	c->fd = -1;
	c->id = 0;
	if (c->stream) {
		stream_queue_free(c->stream);
		free(c->stream);
		c->stream = NULL;
	}
}

/* The source of a line still exists (the FIFO always does) and sends commands, not a stream. */
static bool source_alive(struct control *ctl, int client)
{
	struct client *c;

	if (!ctl->is_unix)
		return true;
	c = client_by_id(ctl, client);
	return c && !c->stream;
}

/* Both directions closed by the peer: it will never read a reply. */
static bool hung_up(int fd)
{
	struct pollfd pfd = { .fd = fd };

	return poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLHUP | POLLERR));
}

/* ---- lines ------------------------------------------------------------------- */

/* Hand one complete line (in b, newline already dropped) to `fn`. */
static void deliver(struct control *ctl, struct linebuf *b, int client, control_line_fn fn, void *ctx)
{
	size_t len = b->len;

	b->len = 0;
	if (len && b->data[len - 1] == '\r')
		len--;
	b->data[len] = '\0';
	/* The callback sees a C string; a NUL would make it run a different command. */
	if (memchr(b->data, '\0', len)) {
		control_reply(ctl, client, "error: NUL byte in line");
		return;
	}
	fn(ctx, client, b->data);
}

/* Add `take` bytes of the current line; `ends` when its newline followed. */
static void append(struct control *ctl, struct linebuf *b, int client, const char *p, size_t take,
		   bool ends, control_line_fn fn, void *ctx)
{
	if (b->discarding) {
		b->discarding = !ends;
		return;
	}
	if (b->len + take >= sizeof(b->data)) { /* no room for it and its NUL */
		b->len = 0;
		b->discarding = !ends;
		control_reply(ctl, client, "error: line too long");
		return;
	}
	memcpy(b->data + b->len, p, take);
	b->len += take;
	if (ends)
		deliver(ctl, b, client, fn, ctx);
}

/* Split freshly read bytes into lines; stops when a reply dropped the client. */
static void feed(struct control *ctl, struct linebuf *b, int client, const char *p, size_t n,
		 control_line_fn fn, void *ctx)
{
	while (n > 0 && source_alive(ctl, client)) {
		const char *nl = memchr(p, '\n', n);
		size_t take = nl ? (size_t)(nl - p) : n;
		size_t used = take + (nl != NULL);

		append(ctl, b, client, p, take, nl != NULL, fn, ctx);
		p += used;
		n -= used;
	}
}

/* ---- input ------------------------------------------------------------------- */

static void fifo_input(struct control *ctl, control_line_fn fn, void *ctx)
{
	char chunk[CONTROL_LINE_MAX];
	/* Never 0: we hold a write end ourselves. EAGAIN waits for the next event. */
	ssize_t n = read(ctl->fd, chunk, sizeof(chunk));

	if (n > 0)
		feed(ctl, &ctl->fifo_in, 0, chunk, (size_t)n, fn, ctx);
}

/*
 * The client sent its last byte. Closed: drop it. Only shut down its
 * sending side (socat, nc -N): keep it for the replies, and let its last
 * line count without a newline, as the console does on stdin.
 */
static void client_eof(struct control *ctl, struct client *c, control_line_fn fn, void *ctx)
{
	if (hung_up(c->fd)) {
		drop_client(c);
		return;
	}
	c->eof = true;
	if (c->in.len && !c->in.discarding && !c->stream)
		deliver(ctl, &c->in, c->id, fn, ctx);
	c->in.len = 0;
	c->in.discarding = false;
}

static void client_input(struct control *ctl, struct client *c, control_line_fn fn, void *ctx)
{
	char chunk[CONTROL_LINE_MAX];
	ssize_t n;

	if (c->eof) { /* polled for hang-up only */
		if (hung_up(c->fd))
			drop_client(c);
		return;
	}
	n = recv(c->fd, chunk, sizeof(chunk), MSG_DONTWAIT);
	if (n > 0 && c->stream)
		return; /* a streaming client's lines are read only to see it close */
	if (n > 0)
		feed(ctl, &c->in, c->id, chunk, (size_t)n, fn, ctx);
	else if (n == 0)
		client_eof(ctl, c, fn, ctx);
	else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
		drop_client(c);
}

static void add_client(struct control *ctl, int fd)
{
	struct client *c = client_by_fd(ctl, -1); /* a free slot */

	if (!c) {
		/* Best effort: it is closed whether or not the line fits. */
		(void)send(fd, too_many_msg, sizeof(too_many_msg) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
		close(fd);
		return;
	}
	/*
	 * Room for a large reply (status --json of many targets is one line):
	 * a line that does not fit whole drops the client. Root may go past
	 * wmem_max (SO_SNDBUFFORCE); others get what SO_SNDBUF allows.
	 */
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &(int){ CONTROL_SNDBUF }, sizeof(int)) < 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &(int){ CONTROL_SNDBUF }, sizeof(int));
	c->fd = fd;
	c->id = new_id(ctl);
	c->eof = false;
	c->in.len = 0;
	c->in.discarding = false;
}

/*
 * A client of the control socket: the socket is 0600, and its credentials
 * are checked too (a descriptor passed on, a mode or folder changed
 * later): root or the socket's owner (dynprof's euid) only. Refused:
 * told in one line, closed, and dynprof says who tried.
 */
static bool peer_allowed(int fd, struct ucred *cred)
{
	socklen_t len = sizeof(*cred);

	*cred = (struct ucred){ .pid = 0, .uid = (uid_t)-1 };
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, cred, &len) < 0)
		return false;
	return cred->uid == 0 || cred->uid == geteuid();
}

/* The refusals counted since the last line, told now (when there are any). */
static void tell_refused(struct control *ctl, int64_t now)
{
	if (!ctl->refused.untold)
		return;
	report_warning("dynprof: --control: refused %u more clients in %lld s (the last: uid %u, pid %d): neither root nor the socket's owner (uid %u)",
		       ctl->refused.untold, (long long)(now - ctl->refused.told_ms + 999) / 1000,
		       (unsigned)ctl->refused.last.uid, (int)ctl->refused.last.pid,
		       (unsigned)geteuid());
	ctl->refused.untold = 0;
	ctl->refused.told_ms = now;
}

static void refuse_peer(struct control *ctl, int fd, const struct ucred *cred)
{
	int64_t now = clock_ms();
	char msg[160];
	int len = snprintf(msg, sizeof(msg),
			   "error: permission denied (uid %u is neither root nor the socket's owner)\n",
			   (unsigned)cred->uid);

	/* Best effort: it is closed whether or not the line fits. */
	(void)send(fd, msg, (size_t)len, MSG_NOSIGNAL | MSG_DONTWAIT);
	close(fd);
	/* One told less than REFUSED_QUIET_MS ago, or some not told yet: counted, told once that time is over. */
	if (ctl->refused.untold ||
	    (ctl->refused.told_ms && now - ctl->refused.told_ms < REFUSED_QUIET_MS)) {
		ctl->refused.untold++;
		ctl->refused.last = *cred;
		if (now - ctl->refused.told_ms >= REFUSED_QUIET_MS)
			tell_refused(ctl, now);
		return;
	}
	report_warning("dynprof: --control: refused a client: uid %u (pid %d) is neither root nor the socket's owner (uid %u)",
		       (unsigned)cred->uid, (int)cred->pid, (unsigned)geteuid());
	ctl->refused.told_ms = now;
}

static void accept_clients(struct control *ctl)
{
	for (int i = 0; i < ACCEPT_BURST; i++) {
		int fd = accept4(ctl->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct ucred cred;

		if (fd >= 0 && !peer_allowed(fd, &cred))
			refuse_peer(ctl, fd, &cred);
		else if (fd >= 0)
			add_client(ctl, fd);
		else if (errno != EINTR && errno != ECONNABORTED)
			return; /* EAGAIN: none left; anything else: the next event retries */
	}
}

/* ---- opening: FIFOs ---------------------------------------------------------- */

/* Make the FIFO when missing, then open it; returns the fd or -1. */
static int fifo_open(struct named_file *f, char *err, size_t errlen)
{
	struct stat st;
	int fd;

	if (mkfifo(f->path, 0600) == 0)
		f->ours = true;
	else if (errno != EEXIST)
		return fail(err, errlen, "cannot make FIFO %s: %s", f->path, strerror(errno));
	if (lstat(f->path, &st) < 0)
		return fail(err, errlen, "cannot check %s: %s", f->path, strerror(errno));
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	if (!S_ISFIFO(st.st_mode))
		return fail(err, errlen, "%s is not a FIFO", f->path);
	/*
	 * O_RDWR (defined for FIFOs on Linux): we are a writer ourselves, so
	 * writers coming and going never bring EOF or a POLLHUP to spin on,
	 * and opening never waits for the other side.
	 */
	fd = open(f->path, O_RDWR | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return fail(err, errlen, "cannot open %s: %s", f->path, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISFIFO(st.st_mode) || st.st_dev != f->dev || st.st_ino != f->ino) {
		close(fd);
		return fail(err, errlen, "%s was replaced while being opened", f->path);
	}
	/* Whoever may write a FIFO commands dynprof: only its own uid may. */
	if (st.st_uid != geteuid() || (st.st_mode & 022)) {
		close(fd);
		return fail(err, errlen,
			    "FIFO %s is not dynprof's own (owner uid %u, mode %04o): it must be owned by uid %u and writable by no one else",
			    f->path, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777),
			    (unsigned)geteuid());
	}
	return fd;
}

static int open_fifos(struct control *ctl, char *err, size_t errlen)
{
	ctl->fd = fifo_open(&ctl->ctl_file, err, errlen);
	if (ctl->fd < 0 || !ctl->ack_file.path)
		return ctl->fd < 0 ? -1 : 0;
	ctl->ack_fd = fifo_open(&ctl->ack_file, err, errlen);
	if (ctl->ack_fd < 0)
		return -1;
	/* Our replies would come back as commands, answered again, forever. */
	if (ctl->ack_file.dev == ctl->ctl_file.dev && ctl->ack_file.ino == ctl->ctl_file.ino)
		return fail(err, errlen, "ACK FIFO %s is the command FIFO %s itself",
			    ctl->ack_file.path, ctl->ctl_file.path);
	return 0;
}

/* ---- opening: the unix socket ------------------------------------------------ */

/* 0: something listens there; else the negative errno of connecting. */
static int probe_socket(const struct sockaddr_un *addr)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	int rc = 0;

	if (fd < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)addr, sizeof(*addr)) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

/* Leave the path free for bind: nothing there, or a socket nobody answers on. */
static int clear_stale(const char *path, const struct sockaddr_un *addr, char *err, size_t errlen)
{
	struct stat st;
	int rc;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ?
			       0 :
			       fail(err, errlen, "cannot check %s: %s", path, strerror(errno));
	if (!S_ISSOCK(st.st_mode))
		return fail(err, errlen, "%s exists and is not a socket", path);
	rc = probe_socket(addr);
	/* EAGAIN: a listener whose backlog is full is still alive. */
	if (rc == 0 || rc == -EAGAIN)
		return fail(err, errlen, "%s is in use by another program", path);
	if (rc != -ECONNREFUSED)
		return fail(err, errlen, "cannot check socket %s: %s", path, strerror(-rc));
	if (unlink(path) < 0 && errno != ENOENT)
		return fail(err, errlen, "cannot remove stale socket %s: %s", path, strerror(errno));
	return 0;
}

/*
 * bind with umask 0177, so the socket never exists with a wider mode than
 * 0600, even for the instant before chmod; chmod then states the mode.
 */
static int bind_private(struct control *ctl, const struct sockaddr_un *addr, char *err, size_t errlen)
{
	struct named_file *f = &ctl->ctl_file;
	mode_t old = umask(0177);
	int rc = bind(ctl->fd, (const struct sockaddr *)addr, sizeof(*addr));
	struct stat st;

	umask(old);
	if (rc < 0)
		return fail(err, errlen, "cannot bind %s: %s", f->path, strerror(errno));
	if (chmod(f->path, 0600) < 0 || lstat(f->path, &st) < 0) {
		int e = errno;

		unlink(f->path);
		return fail(err, errlen, "cannot set mode 0600 on %s: %s", f->path, strerror(e));
	}
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->ours = true;
	return 0;
}

static int open_socket(struct control *ctl, char *err, size_t errlen)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	const char *path = ctl->ctl_file.path;
	size_t len = strlen(path);

	ctl->is_unix = true;
	if (len >= sizeof(addr.sun_path))
		return fail(err, errlen, "%s: %s (%zu bytes; a unix socket path holds at most %zu)",
			    path, strerror(ENAMETOOLONG), len, sizeof(addr.sun_path) - 1);
	memcpy(addr.sun_path, path, len + 1);
	if (clear_stale(path, &addr, err, errlen) < 0)
		return -1;
	ctl->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (ctl->fd < 0)
		return fail(err, errlen, "cannot make a socket for %s: %s", path, strerror(errno));
	if (bind_private(ctl, &addr, err, errlen) < 0)
		return -1;
	if (listen(ctl->fd, CONTROL_BACKLOG) < 0)
		return fail(err, errlen, "cannot listen on %s: %s", path, strerror(errno));
	return 0;
}

/* ---- the spec ---------------------------------------------------------------- */

/* "CTL[,ACK]" into the two paths. */
static int parse_fifo_spec(struct control *ctl, const char *spec, char *err, size_t errlen)
{
	const char *rest = spec + strlen("fifo:");
	const char *comma = strchr(rest, ',');

	ctl->ctl_file.path = comma ? strndup(rest, (size_t)(comma - rest)) : strdup(rest);
	if (comma)
		ctl->ack_file.path = strdup(comma + 1);
	if (!ctl->ctl_file.path || (comma && !ctl->ack_file.path))
		return fail(err, errlen, "%s: %s", spec, strerror(ENOMEM));
	if (!*ctl->ctl_file.path || (comma && !*ctl->ack_file.path))
		return fail(err, errlen, "%s: expected fifo:CTL[,ACK] with non-empty paths", spec);
	return 0;
}

static int open_spec(struct control *ctl, const char *spec, char *err, size_t errlen)
{
	struct stat st;
	const char *path = spec;

	if (!strncmp(spec, "fifo:", 5))
		return parse_fifo_spec(ctl, spec, err, errlen) ?: open_fifos(ctl, err, errlen);
	if (!strncmp(spec, "unix:", 5))
		path = spec + 5;
	if (!*path)
		return fail(err, errlen, "'%s': no path given", spec);
	ctl->ctl_file.path = strdup(path);
	if (!ctl->ctl_file.path)
		return fail(err, errlen, "%s: %s", path, strerror(ENOMEM));
	/* A bare PATH: an existing FIFO is read as one, anything else is a socket. */
	if (path == spec && stat(path, &st) == 0 && S_ISFIFO(st.st_mode))
		return open_fifos(ctl, err, errlen);
	return open_socket(ctl, err, errlen);
}

struct control *control_open(const char *spec, char *err, size_t errlen)
{
	struct control *ctl = calloc(1, sizeof(*ctl));

	if (!ctl) {
		fail(err, errlen, "%s: %s", spec, strerror(ENOMEM));
		return NULL;
	}
	ctl->fd = -1;
	ctl->ack_fd = -1;
	ctl->next_id = 1;
	for (int i = 0; i < CONTROL_MAX_CLIENTS; i++)
		ctl->clients[i].fd = -1;
	if (open_spec(ctl, spec, err, errlen) < 0) {
		control_close(ctl);
		return NULL;
	}
	return ctl;
}

/* Remove a file we made, unless someone has put another in its place since. */
static void remove_if_ours(struct named_file *f)
{
	struct stat st;

	if (f->ours && lstat(f->path, &st) == 0 && st.st_dev == f->dev && st.st_ino == f->ino)
		unlink(f->path);
	free(f->path);
}

void control_close(struct control *ctl)
{
	if (!ctl)
		return;
	tell_refused(ctl, clock_ms());
	for (int i = 0; i < CONTROL_MAX_CLIENTS; i++)
		if (ctl->clients[i].fd >= 0)
			drop_client(&ctl->clients[i]);
	update_listener(ctl);
	if (ctl->fd >= 0)
		close(ctl->fd);
	if (ctl->ack_fd >= 0)
		close(ctl->ack_fd);
	remove_if_ours(&ctl->ctl_file);
	remove_if_ours(&ctl->ack_file);
	free(ctl);
}

/* ---- a streaming client's queue ---------------------------------------------- */

static bool stream_pending(const struct client *c)
{
	const char *p;

	return c->stream && stream_queue_peek(c->stream, &p) > 0;
}

/* Write what its socket takes now; the rest waits for POLLOUT. A broken one is dropped. */
static void stream_flush(struct client *c)
{
	const char *p;
	size_t n;

	while (c->stream && (n = stream_queue_peek(c->stream, &p)) > 0) {
		ssize_t w = send(c->fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (w <= 0) {
			drop_client(c);
			return;
		}
		stream_queue_consumed(c->stream, (size_t)w, clock_wall_us());
	}
}

/* One line into its queue (dropped and counted when full), then out as far as it goes. */
static void stream_send(struct client *c, const char *line, size_t len)
{
	if (stream_queue_push(c->stream, line, len))
		stream_flush(c);
}

/* ---- polling and replies ------------------------------------------------------ */

int control_pollfds(const struct control *ctl, struct pollfd *pfds, int max)
{
	int n = 0;

	if (!ctl || ctl->fd < 0 || max <= 0)
		return 0;
	pfds[n++] = (struct pollfd){ .fd = ctl->fd, .events = POLLIN };
	for (int i = 0; i < CONTROL_MAX_CLIENTS && n < max; i++) {
		const struct client *c = &ctl->clients[i];

		/*
		 * A half-closed client stays readable (EOF) forever: watch it for
		 * hang-up only. A streaming one with lines waiting: for room too.
		 */
		short events = (short)((c->eof ? 0 : POLLIN) | (stream_pending(c) ? POLLOUT : 0));

		if (c->fd >= 0)
			pfds[n++] = (struct pollfd){ .fd = c->fd, .events = events };
	}
	return n;
}

void control_event(struct control *ctl, const struct pollfd *pfd, control_line_fn line, void *ctx)
{
	struct client *c;

	if (!ctl || pfd->fd < 0 || !pfd->revents)
		return;
	/* No timer of its own: the count is told at the next event past the quiet time, or at close. */
	if (ctl->refused.untold && clock_ms() - ctl->refused.told_ms >= REFUSED_QUIET_MS)
		tell_refused(ctl, clock_ms());
	if (pfd->fd == ctl->fd) {
		if (ctl->is_unix)
			accept_clients(ctl);
		else
			fifo_input(ctl, line, ctx);
		return;
	}
	c = client_by_fd(ctl, pfd->fd);
	if (c && (pfd->revents & POLLOUT))
		stream_flush(c);
	if (c && c->fd >= 0 && (pfd->revents & ~POLLOUT))
		client_input(ctl, c, line, ctx);
	update_listener(ctl);
}

/*
 * Whole line or nothing: kept within PIPE_BUF, a pipe write is atomic, so
 * a reader never sees half a reply. We hold a read end of ACK ourselves
 * (O_RDWR), so replies written while nobody reads wait in the pipe for the
 * next reader; once it is full, a reply is dropped (EAGAIN) rather than
 * blocking dynprof.
 */
static void fifo_reply(int fd, struct iovec *iov)
{
	ssize_t n;

	if (iov[0].iov_len > PIPE_BUF - 1)
		iov[0].iov_len = PIPE_BUF - 1;
	do
		n = writev(fd, iov, 2);
	while (n < 0 && errno == EINTR);
}

/* A client that cannot take a whole line now is dropped: a partial line
 * would garble its stream, and waiting would stall dynprof. */
static void socket_reply(struct client *c, struct iovec *iov)
{
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = 2 };
	size_t len = iov[0].iov_len + iov[1].iov_len;
	ssize_t n;

	do
		n = sendmsg(c->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0 || (size_t)n != len)
		drop_client(c);
}

void control_reply(struct control *ctl, int client, const char *text)
{
	struct iovec iov[2] = {
		{ .iov_base = (void *)text, .iov_len = strcspn(text, "\n") },
		{ .iov_base = "\n", .iov_len = 1 },
	};
	struct client *c;

	if (!ctl)
		return;
	if (!ctl->is_unix) {
		if (client == 0 && ctl->ack_fd >= 0)
			fifo_reply(ctl->ack_fd, iov);
		return;
	}
	c = client_by_id(ctl, client);
	if (c && c->stream)
		stream_send(c, text, iov[0].iov_len);
	else if (c)
		socket_reply(c, iov);
}

/* ---- streaming events --------------------------------------------------------- */

static bool any_streams(const struct control *ctl)
{
	for (int i = 0; i < CONTROL_MAX_CLIENTS; i++)
		if (ctl->clients[i].fd >= 0 && ctl->clients[i].stream)
			return true;
	return false;
}

/* Every event, to every streaming client's queue. */
static void on_event(void *ctx, const char *line, size_t len)
{
	struct control *ctl = ctx;

	for (int i = 0; i < CONTROL_MAX_CLIENTS; i++)
		if (ctl->clients[i].fd >= 0 && ctl->clients[i].stream)
			stream_send(&ctl->clients[i], line, len);
	update_listener(ctl);
}

/* Events are built only while someone streams them (or --events writes them). */
static void update_listener(struct control *ctl)
{
	bool want = any_streams(ctl);

	if (want != ctl->listening)
		events_set_listener(want ? on_event : NULL, ctl);
	ctl->listening = want;
}

int control_stream(struct control *ctl, int client, char *err, size_t errlen)
{
	struct client *c;

	if (!ctl || !ctl->is_unix)
		return errbuf_set(err, errlen, "events needs a unix control socket");
	c = client_by_id(ctl, client);
	if (!c)
		return errbuf_set(err, errlen, "the client is gone");
	if (c->stream)
		return 0;
	c->stream = malloc(sizeof(*c->stream));
	if (!c->stream || stream_queue_init(c->stream, STREAM_QUEUE_BYTES)) {
		free(c->stream);
		c->stream = NULL;
		return errbuf_set(err, errlen, "out of memory");
	}
	update_listener(ctl);
	return 0;
}
