// SPDX-License-Identifier: MIT
/*
 * agent_names: a program that links libdynprof_agent.a and defines, for
 * itself, every name the archive's objects use internally (the 57 it
 * exported before it was made to export only the API of agent.h). It
 * links only when the archive keeps those names local; it then checks
 * that its calls reach its own definitions, and serves the protocol
 * through the linked API, so a test can open and close a window with
 * dynprof and see that the agent's calls still reach the agent's code.
 *
 *   agent_names [SECONDS]
 *
 * Prints "ready <pid>" once the socket listens, then waits SECONDS
 * (default 60) or until SIGTERM/SIGINT, shuts the agent down and exits 0.
 * Exits 1 when one of its own names answers wrongly or the agent does
 * not start.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dynprof/agent.h"

/*
 * Names the agent used internally; a new one belongs here too. Not
 * formatted: clang-format would fold the list into a staircase.
 */
// clang-format off
#define INTERNAL_NAMES(X) \
	X(agent_config_load) X(agent_devices_current) X(agent_devices_fini) \
	X(agent_devices_init) X(agent_devices_mark) X(agent_devset_format) X(agent_log) \
	X(agent_log_enable) X(agent_socket_close) X(agent_socket_open) \
	X(cards_default_patterns) X(cards_free_patterns) X(cards_held_by_pid) \
	X(cards_mask_text) X(cards_match) X(cards_parse_patterns) \
	X(clock_ms) X(clock_ms_left) X(clock_stamp_host_log) X(clock_stamp_info_json) \
	X(clock_stamp_take) X(clock_wall_us) \
	X(conn_count_request) X(conn_discard_pending) X(conn_init) X(conn_log_gone) \
	X(conn_read) X(conn_send) X(conn_wait) \
	X(conv_v1_serve) X(conv_v2_serve) \
	X(ctlfile_write) \
	X(fdio_read_full) X(fdio_wait_readable) X(fdio_write_full) \
	X(hostinfo_json) \
	X(params_result_dir) \
	X(profdir_close) X(profdir_open) \
	X(proto_command_name) X(proto_status_name) X(proto_v1_decode_reply) \
	X(proto_v1_decode_test_ack) X(proto_v1_encode_request) X(proto_v1_encode_response) \
	X(proto_v1_request_type) X(proto_v2_decode_params_ack) X(proto_v2_decode_reply) \
	X(proto_v2_encode_params) X(proto_v2_encode_request) X(proto_v2_encode_response) \
	X(proto_version_name) \
	X(window_collecting) X(window_forget_after_fork) X(window_set_ops) X(window_start) \
	X(window_stop)
// clang-format on

/* Each own definition answers with a mark the agent's never would. */
#define OWN_MARK 0x5eed
#define DEFINE_OWN(name)         \
	int name(void);          \
	int name(void)           \
	{                        \
		return OWN_MARK; \
	}
INTERNAL_NAMES(DEFINE_OWN)

#define TABLE_ENTRY(name) { #name, name },
static const struct {
	const char *name;
	int (*fn)(void);
} own[] = { INTERNAL_NAMES(TABLE_ENTRY) };

static int check_own_names(void)
{
	int bad = 0;

	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++) {
		if (own[i].fn() != OWN_MARK) {
			fprintf(stderr, "agent_names: %s is not this program's\n", own[i].name);
			bad = 1;
		}
	}
	return bad;
}

static long parse_seconds(const char *text)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(text, &end, 10);
	return errno || !*text || *end || n < 0 || n > 86400 ? -1 : n;
}

int main(int argc, char **argv)
{
	long seconds = argc > 1 ? parse_seconds(argv[1]) : 60;
	struct timespec ts;
	sigset_t set;
	int err;

	if (seconds < 0) {
		fprintf(stderr, "usage: agent_names [SECONDS]\n");
		return 2;
	}
	/* Blocked first, so an early SIGTERM ends the wait, not the process. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (check_own_names())
		return 1;
	err = dynprof_agent_start(NULL);
	if (err) {
		fprintf(stderr, "agent_names: dynprof_agent_start: %s\n", strerror(-err));
		return 1;
	}
	dynprof_agent_set_device(0);
	printf("ready %ld %s\n", (long)getpid(), dynprof_agent_socket_path());
	fflush(stdout);
	ts = (struct timespec){ .tv_sec = seconds };
	while (sigtimedwait(&set, NULL, &ts) < 0 && errno == EINTR)
		;
	dynprof_agent_shutdown();
	return 0;
}
