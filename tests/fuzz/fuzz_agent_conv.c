// SPDX-License-Identifier: MIT
/*
 * The agent's conversations (agent/conv_v2.c, conv_v1.c, conn.c, and the
 * window, folder and params code a START reaches): the input is what a
 * client sends, over a real socketpair, to the conversation the server
 * thread would run for it. Any local user can be that client. Linked with
 * the agent's own objects (not the tool's), see the Makefile.
 *
 * First byte: bit 0 the generation (v1 / v2), bit 1 CANN 8.5.0's flavour
 * (v2 only: no limits, no DISCONNECT), bit 2 whether the process holds a
 * card (a file <tmp>/davinci3 matching DYNPROF_AGENT_DEVICES), bits 3-4
 * the request limit (101, 1, 3 or none), bit 5 the agent already shutting
 * down. The rest: the client's bytes, sent at once, then the client shuts
 * down its sending side and reads until the server's end is closed.
 *
 * The client chooses result_dir, so the folders a START makes would go
 * anywhere: agent_params_result_dir is wrapped (ld --wrap) to map
 * FUZZ_CLIENT_ROOT (the seeds' result_dir, and ASCEND_WORK_PATH for 9.x's
 * default) into a temporary folder, and any other place (or a ".." in it)
 * is refused as a folder the agent may not make. The folders are removed
 * after each input, the temporary folder at exit.
 *
 * What it promises: each input ends on its own (the client's EOF, a
 * limit), well under a second; the replies are whole messages of known
 * types and codes, in the order CANN sends them (PARAMS_RSP first in v2;
 * DISCONNECT only before a QUIT_RSP and never in 8.5.0's flavour; nothing
 * after the final QUIT_RSP; v1 details NUL-terminated); at most the limit
 * of START/STOP answers; one PROF_ folder per successful START, each
 * finalised (end_info) when the conversation ends, except in 8.5.0's
 * flavour, whose window outlives its client. DYNPROF_AGENT_LOG=1 shows
 * the agent's log of each input on stderr.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "dynprof/proto.h"
#include "agent/config.h"
#include "agent/conn.h"
#include "agent/conv.h"
#include "agent/device.h"
#include "agent/log.h"
#include "agent/params.h"
#include "agent/window.h"

#define FUZZ_CLIENT_ROOT "/tmp/dynprof-fuzz-agent" /* as the seeds name it */
#define REPLIES_MAX (1 << 20)

static struct {
	bool ready;
	char dir[64];     /* the temporary folder */
	char results[96]; /* FUZZ_CLIENT_ROOT maps here */
	char card[96];
	int wake_idle, wake_shut; /* eventfds: never readable, readable */
} env;

/* ---- keeping the client's folders in the temporary one ------------------------- */

int __real_agent_params_result_dir(char *out, size_t len);
int __wrap_agent_params_result_dir(char *out, size_t len);

int __wrap_agent_params_result_dir(char *out, size_t len)
{
	char dir[PATH_MAX];
	size_t root = strlen(FUZZ_CLIENT_ROOT);
	int rc = __real_agent_params_result_dir(dir, sizeof(dir));

	if (rc)
		return rc;
	if (strncmp(dir, FUZZ_CLIENT_ROOT, root) || (dir[root] && dir[root] != '/') || strstr(dir, "/.."))
		return -EACCES;
	return snprintf(out, len, "%s%s", env.results, dir + root) < (int)len ? 0 : -ENAMETOOLONG;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void clear_results(void)
{
	nftw(env.results, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void cleanup(void)
{
	window_stop();
	clear_results();
	unlink(env.card);
	rmdir(env.dir);
}

static void setup(void)
{
	char pattern[128];
	int fd;

	/* tmpfs when there is one: each START makes a folder of eleven files. */
	snprintf(env.dir, sizeof(env.dir), "%s/dynprof-fuzz-conv.XXXXXX",
		 access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm");
	FUZZ_CHECK(mkdtemp(env.dir));
	snprintf(env.results, sizeof(env.results), "%s/results", env.dir);
	snprintf(env.card, sizeof(env.card), "%s/davinci3", env.dir);
	fd = open(env.card, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	FUZZ_CHECK(fd >= 0);
	close(fd);
	atexit(cleanup);
	fuzz_cleanup_on_crash(cleanup);
	snprintf(pattern, sizeof(pattern), "%s/davinci*", env.dir);
	setenv("DYNPROF_AGENT_DEVICES", pattern, 1);
	setenv("ASCEND_WORK_PATH", FUZZ_CLIENT_ROOT, 1); /* 9.x's default result_dir */
	FUZZ_CHECK(agent_devices_init() == 0);
	agent_log_enable(getenv("DYNPROF_AGENT_LOG") != NULL); /* to see what a finding did */
	env.wake_idle = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	env.wake_shut = eventfd(1, EFD_CLOEXEC | EFD_NONBLOCK);
	FUZZ_CHECK(env.wake_idle >= 0 && env.wake_shut >= 0);
	env.ready = true;
}

/* ---- the client ----------------------------------------------------------------- */

struct client {
	int fd;
	const uint8_t *data;
	size_t len;
	uint8_t *got;
	size_t got_len;
};

static void *client_main(void *arg)
{
	struct client *c = arg;
	size_t sent = 0;
	bool shut = false;

	for (;;) {
		struct pollfd p = { .fd = c->fd, .events = POLLIN | (shut ? 0 : POLLOUT) };
		ssize_t n;

		if (!shut && sent == c->len) {
			shutdown(c->fd, SHUT_WR);
			shut = true;
			continue;
		}
		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			break;
		if (!shut && (p.revents & POLLOUT)) {
			n = send(c->fd, c->data + sent, c->len - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
			if (n > 0)
				sent += (size_t)n;
			else if (n < 0 && errno != EAGAIN && errno != EINTR)
				sent = c->len; /* the server is gone: read what it said */
		}
		if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
			n = recv(c->fd, c->got + c->got_len, REPLIES_MAX - c->got_len, MSG_DONTWAIT);
			if (n > 0)
				c->got_len += (size_t)n;
			else if (n == 0 || (errno != EAGAIN && errno != EINTR) || c->got_len == REPLIES_MAX)
				break;
		}
	}
	return NULL;
}

/*
 * Buffers that hold a whole input and every reply (8.5.0's flavour answers
 * each of up to 16 K requests), so that the client can send everything
 * first and read afterwards, in this thread: a client thread costs a
 * wake-up per message. Needs CAP_NET_ADMIN (SO_SNDBUFFORCE); without it,
 * a client thread sends and reads while the conversation runs.
 */
static bool roomy(int fd)
{
	int bytes = 64 << 20;

	return setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &bytes, sizeof(bytes)) == 0;
}

/* ---- what the replies must look like --------------------------------------------- */

static int count_prof_dirs(bool *all_finalised)
{
	char path[PATH_MAX + 300];
	struct dirent *e;
	DIR *d;
	int n = 0;

	*all_finalised = true;
	/* Seeds use <root>/out; other folders under the root are found by a walk of one level. */
	snprintf(path, sizeof(path), "%s/out", env.results);
	d = opendir(path);
	if (!d)
		return 0;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "PROF_", 5)) {
			snprintf(path, sizeof(path), "%s/out/%s/host/end_info", env.results, e->d_name);
			if (access(path, F_OK))
				*all_finalised = false;
			n++;
		}
	closedir(d);
	return n;
}

/* Returns the successful STARTs. */
static int check_v2(const uint8_t *got, size_t len, const struct agent_config *cfg)
{
	size_t n = len / sizeof(struct proto_v2_msg);
	int answers = 0, started = 0;

	FUZZ_CHECK(len % sizeof(struct proto_v2_msg) == 0);
	for (size_t i = 0; i < n; i++) {
		struct proto_v2_msg m;

		memcpy(&m, got + i * sizeof(m), sizeof(m));
		FUZZ_CHECK((m.msg_type == V2_PARAMS_RSP) == (i == 0));
		FUZZ_CHECK(m.status_code >= V2_SUCCESS && m.status_code <= V2_NOT_START);
		switch (m.msg_type) {
		case V2_PARAMS_RSP:
			FUZZ_CHECK(m.status_code <= V2_FAIL);
			FUZZ_CHECK(m.status_code == V2_SUCCESS || n == 1);
			break;
		case V2_START_RSP:
			started += m.status_code == V2_SUCCESS;
			/* fall through */
		case V2_STOP_RSP:
			answers++;
			break;
		case V2_DISCONNECT_RSP:
			FUZZ_CHECK(!cfg->abstract);
			FUZZ_CHECK(m.status_code == V2_SUCCESS);
			FUZZ_CHECK(i + 2 == n); /* then QUIT handling's QUIT_RSP, last */
			break;
		case V2_QUIT_RSP:
			FUZZ_CHECK(i + 1 == n);
			FUZZ_CHECK(m.status_code <= V2_FAIL);
			break;
		default:
			FUZZ_CHECK(!"a v2 reply of an unknown type");
		}
	}
	if (cfg->max_requests)
		FUZZ_CHECK(answers <= cfg->max_requests);
	return started;
}

static int check_v1(const uint8_t *got, size_t len, const struct agent_config *cfg)
{
	size_t n = len / sizeof(struct proto_v1_response);
	int answers = 0, started = 0;

	FUZZ_CHECK(len % sizeof(struct proto_v1_response) == 0);
	for (size_t i = 0; i < n; i++) {
		struct proto_v1_response r;

		memcpy(&r, got + i * sizeof(r), sizeof(r));
		FUZZ_CHECK(fuzz_terminated(r.msg_data, sizeof(r.msg_data)));
		FUZZ_CHECK(r.msg_data_len == strlen(r.msg_data));
		FUZZ_CHECK(r.status_code == 0 || r.status_code == 1);
		switch (r.msg_type) {
		case V1_START_RSP:
			started += r.status_code == 0;
			/* fall through */
		case V1_STOP_RSP:
		case V1_TEST_RSP:
			answers++;
			break;
		case V1_DISCONN_RSP:
			FUZZ_CHECK(i + 2 == n); /* then QUIT_RSP, last */
			break;
		case V1_QUIT_RSP: /* last; or a QUIT's: DISCONN "Client request quit.", QUIT_RSP */
			FUZZ_CHECK(i + 1 == n || i + 3 == n);
			break;
		default:
			FUZZ_CHECK(!"a v1 reply of an unknown type");
		}
	}
	if (cfg->max_requests)
		FUZZ_CHECK(answers <= cfg->max_requests);
	return started;
}

/* ---- one conversation ------------------------------------------------------------- */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int limits[] = { PROTO_V2_MAX_REQUESTS, 1, 3, 0 };
	struct agent_config cfg = { 0 };
	struct agent_conn c = { 0 };
	struct client cl = { 0 };
	pthread_t thread;
	int sv[2], card = -1, started, prof_dirs;
	bool finalised, threaded;

	if (size < 1)
		return 0;
	if (!env.ready)
		setup();
	cfg.protocol = data[0] & 1 ? PROTO_V1 : PROTO_V2;
	cfg.abstract = cfg.protocol == PROTO_V2 && (data[0] & 2);
	/* As agent_config_load: 8.5.0's flavour has no limits. */
	cfg.max_requests = cfg.abstract ? 0 : limits[(data[0] >> 3) & 3];
	cfg.idle_timeout_sec = cfg.abstract ? 0 : 1;
	if (data[0] & 4) {
		card = open(env.card, O_RDONLY | O_CLOEXEC);
		FUZZ_CHECK(card >= 0);
	}
	FUZZ_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
	cl = (struct client){ .fd = sv[1], .data = data + 1, .len = size - 1 };
	cl.got = malloc(REPLIES_MAX);
	FUZZ_CHECK(cl.got);
	threaded = !roomy(sv[0]) || !roomy(sv[1]);
	if (threaded) {
		FUZZ_CHECK(pthread_create(&thread, NULL, client_main, &cl) == 0);
	} else {
		FUZZ_CHECK(send(sv[1], cl.data, cl.len, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)cl.len);
		shutdown(sv[1], SHUT_WR);
	}

	conn_init(&c, sv[0], data[0] & 32 ? env.wake_shut : env.wake_idle, &cfg);
	if (cfg.protocol == PROTO_V1)
		conv_v1_serve(&c);
	else
		conv_v2_serve(&c);
	/* What server.c does after: v2 keeps the connection (closed here, as at shutdown). */
	if (cfg.protocol == PROTO_V1 || c.ends_server)
		conn_discard_pending(&c);
	close(sv[0]);
	if (threaded)
		pthread_join(thread, NULL);
	else
		client_main(&cl); /* only reads now: all was sent */
	close(sv[1]);

	started = cfg.protocol == PROTO_V1 ? check_v1(cl.got, cl.got_len, &cfg) :
					     check_v2(cl.got, cl.got_len, &cfg);
	prof_dirs = count_prof_dirs(&finalised);
	FUZZ_CHECK(prof_dirs <= started); /* one folder per START (other result_dirs not counted) */
	if (!cfg.abstract) {
		FUZZ_CHECK(!window_collecting()); /* 9.x and v1 finalise at every end */
		FUZZ_CHECK(finalised);
	}
	/* The next input starts with no window, no params, no folders. */
	window_stop();
	agent_params_reset();
	clear_results();
	if (card >= 0)
		close(card);
	free(cl.got);
	return 0;
}
