// SPDX-License-Identifier: MIT
/*
 * The server's lifecycle and the public API: start, the accept-loop
 * thread (one client at a time, at most 128 per lifetime, as CANN), and
 * shutdown. The host program never waits on the server thread: the API
 * calls it makes while the server runs read atomics; only start and
 * shutdown take the lifecycle lock, which the thread never takes.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dynprof/agent.h"
#include "shared/cards.h"
#include "agent/config.h"
#include "agent/conv.h"
#include "agent/device.h"
#include "agent/log.h"
#include "agent/sockpath.h"
#include "agent/window.h"

#define API __attribute__((visibility("default")))

#define MAX_ACCEPTS 128     /* per process lifetime, as CANN 9.x and v1 (8.5.0: none) */
#define KEPT_MAX 256        /* finished v2 connections kept open, as CANN keeps them */
#define ACCEPT_RETRY_MS 100 /* after a resource error on accept */

static struct {
	pthread_mutex_t lock; /* start and shutdown only */
	int running;          /* between a successful start and shutdown */
	pid_t owner;          /* the process that started it (fork() copies this) */
	pthread_t thread;
	struct agent_socket sock;
	int wake_fd; /* eventfd: readable once shutdown began */
	struct agent_config cfg;
	atomic_int listening; /* the socket file is there and accepting */
	atomic_int client_fd; /* the connection being served, or -1 */
	int kept[KEPT_MAX];   /* finished v2 connections, never closed by CANN */
	int nkept;
} srv = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.sock = { .fd = -1 },
	.wake_fd = -1,
	.client_fd = -1,
};

/* 1 when shutdown began during `ms` milliseconds of waiting. */
static int wait_wake(int ms)
{
	struct pollfd pfd = { .fd = srv.wake_fd, .events = POLLIN };

	return poll(&pfd, 1, ms) > 0;
}

/* The next client, or -ESHUTDOWN. */
static int accept_next(void)
{
	for (;;) {
		struct pollfd pfd[2] = {
			{ .fd = srv.wake_fd, .events = POLLIN },
			{ .fd = srv.sock.fd, .events = POLLIN },
		};
		int64_t due = window_orphan_due_ms(srv.cfg.orphan_grace_sec);
		int fd, n = poll(pfd, 2, due < 0 ? -1 : (int)(due > INT_MAX ? INT_MAX : due));

		if (n < 0 && errno != EINTR)
			return -errno;
		if (n > 0 && pfd[0].revents)
			return -ESHUTDOWN;
		if (n == 0 && due >= 0 && window_orphan_due_ms(srv.cfg.orphan_grace_sec) == 0)
			window_stop_orphan(srv.cfg.orphan_grace_sec);
		if (!(pfd[1].revents & POLLIN))
			continue;
		fd = accept4(srv.sock.fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0)
			return fd;
		/* Out of fds or memory: the client waits in the backlog; retry later. */
		if ((errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) &&
		    wait_wake(ACCEPT_RETRY_MS))
			return -ESHUTDOWN;
	}
}

/*
 * CANN v2 never closes an accepted connection (the next accept overwrites
 * its variable): the client must close, and the process keeps its end.
 * Kept until shutdown; past KEPT_MAX (8.5.0 has no accept cap) the oldest
 * is closed.
 */
static void keep_connection(int fd)
{
	if (srv.nkept == KEPT_MAX) {
		close(srv.kept[0]);
		memmove(srv.kept, srv.kept + 1, sizeof(srv.kept[0]) * (KEPT_MAX - 1));
		srv.nkept--;
	}
	srv.kept[srv.nkept++] = fd;
}

static void close_kept(void)
{
	for (int i = 0; i < srv.nkept; i++)
		close(srv.kept[i]);
	srv.nkept = 0;
}

/* Serve one client; 1 when the accept loop must end (CANN after a short Params). */
static int serve_client(int fd)
{
	struct agent_conn c = { 0 };

	atomic_store(&srv.client_fd, fd);
	agent_log("client connected");
	window_client_connected();
	conn_init(&c, fd, srv.wake_fd, &srv.cfg);
	if (srv.cfg.protocol == PROTO_V1)
		conv_v1_serve(&c);
	else
		conv_v2_serve(&c);
	atomic_store(&srv.client_fd, -1);
	/*
	 * 8.5.0 leaves a window open when its connection ends without a
	 * STOP (the client died, or an unknown type): ours waits a grace
	 * period for a later client, then stops it (window_orphan).
	 */
	if (srv.cfg.abstract && window_collecting())
		window_orphan(srv.cfg.orphan_grace_sec);
	if (srv.cfg.protocol == PROTO_V2 && !c.ends_server) {
		keep_connection(fd);
		agent_log("client done (connection kept open, as CANN)");
		return 0;
	}
	conn_discard_pending(&c);
	close(fd);
	agent_log("client closed");
	return c.ends_server;
}

static void *server_main(void *arg)
{
	int accepts = 0, fd = 0, ended = 0;
	int cap = srv.cfg.abstract ? INT_MAX : MAX_ACCEPTS;

	(void)arg;
	/*
	 * CANN names its server thread MSVP_DynProfServer, which the kernel
	 * cuts to 15 characters: tools can tell from
	 * /proc/<pid>/task/<tid>/comm whether a server thread runs.
	 */
	pthread_setname_np(pthread_self(), "MSVP_DynProfSer");
	while (accepts < cap && !ended && (fd = accept_next()) >= 0) {
		accepts++;
		ended = serve_client(fd);
	}
	atomic_store(&srv.listening, 0);
	if (ended) {
		agent_log("short or empty params: accept loop ended for good%s",
			  srv.sock.abstract ? ", name left bound" : "");
		/* 8.5.0 leaves the abstract listener bound with nobody accepting. */
		if (srv.sock.abstract)
			return NULL;
	} else if (accepts == cap) {
		agent_log("%d clients served: no longer listening", MAX_ACCEPTS);
	} else if (fd != -ESHUTDOWN) {
		agent_log("accept: %s: no longer listening", strerror(-fd));
	}
	/* CANN removes the socket file when its accept loop ends. */
	agent_socket_close(&srv.sock);
	return NULL;
}

/* The server thread takes no signals: they belong to the host program. */
static int spawn_thread(void)
{
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&srv.thread, NULL, server_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -rc;
}

/*
 * A process ended by SIGTERM, SIGINT or SIGHUP runs no atexit hook, so its
 * socket file would stay behind (CANN's does) and a later look would find a
 * file that nobody serves. Where the program leaves such a signal at its
 * default (it dies of it), the agent takes it first: it removes its own
 * socket file and lets the signal end the process as it would have. A
 * handler or SIG_IGN the program set is never replaced; one it sets later
 * replaces ours, and its exit() then removes the file through shutdown.
 * The handler uses only async-signal-safe calls on data written before it
 * was armed.
 */
static const int ending_signals[] = { SIGTERM, SIGINT, SIGHUP };
static struct {
	char path[sizeof(srv.sock.path)];
	dev_t dev;
	ino_t ino;
	pid_t owner;
	volatile sig_atomic_t armed;
} ending;

static void on_ending_signal(int sig)
{
	int saved = errno;
	struct stat st;

	/* A fork()ed child dies of it too, leaving the parent's file alone. */
	if (ending.armed && getpid() == ending.owner && lstat(ending.path, &st) == 0 &&
	    st.st_dev == ending.dev && st.st_ino == ending.ino)
		unlink(ending.path);
	/* SA_RESETHAND put the default back; delivered once this returns. */
	raise(sig);
	errno = saved;
}

static void block_ending_signals(sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(ending_signals) / sizeof(ending_signals[0]); i++)
		sigaddset(&set, ending_signals[i]);
	pthread_sigmask(SIG_BLOCK, &set, old);
}

static void arm_ending_signals(void)
{
	struct sigaction sa = { .sa_handler = on_ending_signal, .sa_flags = SA_RESETHAND };

	if (srv.sock.abstract)
		return; /* an abstract name goes with the process: no file */
	memcpy(ending.path, srv.sock.path, sizeof(ending.path));
	ending.dev = srv.sock.dev;
	ending.ino = srv.sock.ino;
	ending.owner = getpid();
	ending.armed = 1;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(ending_signals) / sizeof(ending_signals[0]); i++) {
		struct sigaction old;

		if (sigaction(ending_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL &&
		    !(old.sa_flags & SA_SIGINFO) && sigaction(ending_signals[i], &sa, NULL) < 0)
			agent_log("signal %d: socket file not removed at it: %s", ending_signals[i],
				  strerror(errno));
	}
}

/* Everything start acquired; the error path and shutdown share it. */
static void release(void)
{
	ending.armed = 0; /* the file goes now; a later one at the path is not ours */
	atomic_store(&srv.listening, 0);
	agent_socket_close(&srv.sock);
	close_kept();
	if (srv.wake_fd >= 0)
		close(srv.wake_fd);
	srv.wake_fd = -1;
	agent_devices_fini();
}

/* A fork()ed child has no server thread: it must not act for the parent's. */
static void after_fork_child(void)
{
	int client = atomic_load(&srv.client_fd);

	pthread_mutex_init(&srv.lock, NULL);
	window_forget_after_fork();
	if (!srv.running)
		return;
	/* Close our copies, without unlinking: the socket file is the parent's. */
	if (client >= 0)
		close(client);
	if (srv.sock.fd >= 0)
		close(srv.sock.fd);
	if (srv.wake_fd >= 0)
		close(srv.wake_fd);
	srv.sock.fd = srv.wake_fd = -1;
	close_kept();
	atomic_store(&srv.client_fd, -1);
	atomic_store(&srv.listening, 0);
	srv.running = 0;
	agent_devices_fini();
}

static void exit_hook(void)
{
	dynprof_agent_shutdown();
}

static void register_hooks(void)
{
	atexit(exit_hook);
	pthread_atfork(NULL, NULL, after_fork_child);
}

static int start_locked(const struct dynprof_agent_ops *ops)
{
	static pthread_once_t hooks_once = PTHREAD_ONCE_INIT;
	const char *bad = NULL;
	sigset_t old;
	int rc;

	rc = agent_config_load(&srv.cfg, &bad);
	agent_log_enable(srv.cfg.log);
	if (rc) {
		agent_log("%s: unusable value \"%s\"", bad, getenv(bad));
		return rc;
	}
	rc = agent_devices_init();
	if (rc) {
		agent_log("%s: unusable value \"%s\"", CARDS_PATTERNS_ENV, getenv(CARDS_PATTERNS_ENV));
		return rc;
	}
	window_set_ops(ops, srv.cfg.chip);
	srv.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (srv.wake_fd < 0)
		return -errno;
	/*
	 * The ending signals wait from before the file exists until the handler
	 * that removes it is armed: one sent in between (a kill as soon as the
	 * file shows) is delivered to the handler, not fatal with the file left.
	 */
	block_ending_signals(&old);
	rc = agent_socket_open(&srv.sock, srv.cfg.key, srv.cfg.abstract);
	if (rc) {
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		agent_log("cannot listen: %s", strerror(-rc));
		return rc;
	}
	atomic_store(&srv.listening, 1);
	rc = spawn_thread();
	if (rc) {
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		return rc;
	}
	pthread_once(&hooks_once, register_hooks);
	arm_ending_signals();
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	agent_log("listening on %s", srv.sock.path);
	agent_log("protocol %s", proto_version_name(srv.cfg.protocol));
	return 0;
}

API int dynprof_agent_start(const struct dynprof_agent_ops *ops)
{
	int rc;

	pthread_mutex_lock(&srv.lock);
	if (srv.running) {
		pthread_mutex_unlock(&srv.lock);
		return -EALREADY;
	}
	rc = start_locked(ops);
	if (rc)
		release();
	srv.running = rc == 0;
	srv.owner = getpid();
	pthread_mutex_unlock(&srv.lock);
	return rc;
}

API void dynprof_agent_set_device(int device_id)
{
	if (agent_devices_mark(device_id))
		agent_log("set_device(%d): ignored, ids are 0..%d", device_id, AGENT_DEVICE_ID_MAX);
	else
		agent_log("device %d set", device_id);
}

API int dynprof_agent_collecting(void)
{
	return window_collecting();
}

API const char *dynprof_agent_socket_path(void)
{
	return atomic_load(&srv.listening) ? srv.sock.path : NULL;
}

API void dynprof_agent_shutdown(void)
{
	pthread_mutex_lock(&srv.lock);
	/* Not from a callback: the server thread cannot join itself. */
	if (!srv.running || srv.owner != getpid() || pthread_equal(pthread_self(), srv.thread)) {
		pthread_mutex_unlock(&srv.lock);
		return;
	}
	if (eventfd_write(srv.wake_fd, 1) < 0)
		agent_log("shutdown: cannot wake the server thread: %s", strerror(errno));
	pthread_join(srv.thread, NULL);
	/* A window left open by a client that went away ends with the process. */
	window_stop();
	release();
	srv.running = 0;
	pthread_mutex_unlock(&srv.lock);
	agent_log("shut down");
}
