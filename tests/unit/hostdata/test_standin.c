// SPDX-License-Identifier: MIT
/*
 * The stand-in server of a target without a socket (standin.c), spoken to
 * as the session speaks to any server (v2 over its socketpair end): the
 * params acknowledged, each window a PROF_ folder named for the target with
 * CANN's host control files, START/STOP answered as CANN's server answers
 * them out of turn, and an open window finished by QUIT or by the
 * session's close.
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dynprof/proto.h"
#include "hostdata/standin.h"
#include "shared/fdio.h"
#include "unit.h"

#define PID 4242

static char dir[64];

static int start(void)
{
	struct standin_desc d = { .pid = getpid(), .nspid = PID, .chip = 5, .result_dir = dir };
	struct proto_v2_params p;
	struct proto_v2_msg m;
	int fd;

	strcpy(dir, "/tmp/dynprof-standin.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	fd = standin_start(&d);
	if (fd < 0 || proto_v2_encode_params(&p, "{\"result_dir\":\"x\",\"devices\":\"0\"}") < 0 ||
	    fdio_write_full(fd, &p, sizeof(p), clock_ms() + 2000) ||
	    fdio_read_full(fd, &m, sizeof(m), clock_ms() + 2000, NULL) ||
	    m.msg_type != V2_PARAMS_RSP || m.status_code != V2_SUCCESS)
		return -1;
	return fd;
}

/* Send request `type`; the reply's code, or -1 when the reply is not `rsp`. */
static int ask(int fd, int32_t type, int32_t rsp)
{
	struct proto_v2_msg m = { type, 0 };

	if (fdio_write_full(fd, &m, sizeof(m), clock_ms() + 2000) ||
	    fdio_read_full(fd, &m, sizeof(m), clock_ms() + 2000, NULL) || m.msg_type != rsp)
		return -1;
	return m.status_code;
}

/* The one PROF_ folder's host/NAME exists (path into `out`), 0 when there is none. */
static int host_file(const char *name, char *out, size_t len)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	struct stat st;
	int found = 0;

	while (d && (e = readdir(d)))
		if (!strncmp(e->d_name, "PROF_", 5)) {
			snprintf(out, len, "%s/%s/host/%s", dir, e->d_name, name);
			found = stat(out, &st) == 0;
		}
	if (d)
		closedir(d);
	return found;
}

/* Wait up to 2 s for the server thread to finish what the close asked. */
static int host_file_soon(const char *name)
{
	char path[512];

	for (int i = 0; i < 200; i++) {
		if (host_file(name, path, sizeof(path)))
			return 1;
		usleep(10000);
	}
	return 0;
}

static void cleanup(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd)) {
		/* a temporary folder left behind */
	}
}

TEST(a_window_is_a_prof_folder_named_for_the_target_with_canns_host_files)
{
	char path[512], text[4096] = "";
	int fd = start();
	FILE *f;

	REQUIRE(fd >= 0);
	CHECK_INT(ask(fd, V2_START_REQ, V2_START_RSP), V2_SUCCESS);
	CHECK(host_file("start_info", path, sizeof(path)));
	CHECK(strstr(path, "_00004242") != NULL); /* the target's pid in its namespace names it */
	CHECK(host_file("start_info.done", path, sizeof(path)));
	CHECK(host_file("host_start.log", path, sizeof(path)));
	CHECK(host_file("info.json", path, sizeof(path)));
	f = fopen(path, "r");
	if (f) {
		CHECK(fread(text, 1, sizeof(text) - 1, f) > 0);
		fclose(f);
	}
	CHECK(strstr(text, "\"pid\":\"4242\"") != NULL);
	CHECK(strstr(text, "\"platform_version\":\"5\"") != NULL);
	CHECK(host_file("sample.json", path, sizeof(path)));
	f = fopen(path, "r");
	memset(text, 0, sizeof(text));
	if (f) {
		CHECK(fread(text, 1, sizeof(text) - 1, f) > 0);
		fclose(f);
	}
	CHECK(strstr(text, "\"devices\":\"64\"") != NULL);
	CHECK(!host_file("end_info", path, sizeof(path)));
	CHECK_INT(ask(fd, V2_STOP_REQ, V2_STOP_RSP), V2_SUCCESS);
	CHECK(host_file("end_info", path, sizeof(path)));
	CHECK_INT(ask(fd, V2_QUIT_REQ, V2_QUIT_RSP), V2_SUCCESS);
	close(fd);
	cleanup();
}

TEST(out_of_turn_commands_are_answered_as_cann_answers_them)
{
	int fd = start();

	REQUIRE(fd >= 0);
	CHECK_INT(ask(fd, V2_STOP_REQ, V2_STOP_RSP), V2_NOT_START);
	CHECK_INT(ask(fd, V2_START_REQ, V2_START_RSP), V2_SUCCESS);
	CHECK_INT(ask(fd, V2_START_REQ, V2_START_RSP), V2_ALREADY_START);
	CHECK_INT(ask(fd, V2_STOP_REQ, V2_STOP_RSP), V2_SUCCESS);
	CHECK_INT(ask(fd, V2_STOP_REQ, V2_STOP_RSP), V2_NOT_START);
	/* An unknown request ends the connection with DISCONNECT. */
	CHECK_INT(ask(fd, 99, V2_DISCONNECT_RSP), V2_SUCCESS);
	close(fd);
	cleanup();
}

TEST(an_open_window_is_finished_by_quit_or_by_the_sessions_close)
{
	int fd = start();

	REQUIRE(fd >= 0);
	CHECK_INT(ask(fd, V2_START_REQ, V2_START_RSP), V2_SUCCESS);
	CHECK_INT(ask(fd, V2_QUIT_REQ, V2_QUIT_RSP), V2_SUCCESS);
	CHECK(host_file_soon("end_info"));
	close(fd);
	cleanup();

	fd = start();
	REQUIRE(fd >= 0);
	CHECK_INT(ask(fd, V2_START_REQ, V2_START_RSP), V2_SUCCESS);
	close(fd);
	CHECK(host_file_soon("end_info"));
	cleanup();
}

TEST(a_window_that_cannot_be_made_fails_its_start)
{
	int fd = start();

	REQUIRE(fd >= 0);
	cleanup(); /* the result folder is gone */
	CHECK_INT(ask(fd, V2_START_REQ, V2_START_RSP), V2_FAIL);
	CHECK_INT(ask(fd, V2_STOP_REQ, V2_STOP_RSP), V2_NOT_START);
	close(fd);
}

UNIT_MAIN()
