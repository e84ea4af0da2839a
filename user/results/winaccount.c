// SPDX-License-Identifier: MIT
/* How each window ended, as one account (see winaccount.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/json_num.h"
#include "report/escape.h"
#include "results/output.h"
#include "results/winaccount.h"

const char *window_fate_name(enum window_fate fate)
{
	return fate == WINDOW_SAVED ? "saved" : fate == WINDOW_INCOMPLETE ? "incomplete" : "lost";
}

/* A folder entry of dirfd, opened without following (a symlink is refused). */
static int open_subdir(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int winaccount_prof_finished(const char *dir, const char *name)
{
	int d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), prof = -1, host = -1, rc;
	struct stat st;

	if (d < 0)
		return -errno;
	prof = open_subdir(d, name);
	host = prof < 0 ? prof : open_subdir(prof, "host");
	rc = host;
	if (host >= 0)
		rc = fstatat(host, "end_info", &st, AT_SYMLINK_NOFOLLOW) ?
			     (errno == ENOENT ? 0 : -errno) :
			     S_ISREG(st.st_mode);
	else if (host == -ENOENT && prof >= 0)
		rc = 0; /* no host/ at all: killed before it was made */
	if (host >= 0)
		close(host);
	if (prof >= 0)
		close(prof);
	close(d);
	return rc;
}

void winaccount_to_json(const struct window_account *a, const char *output, cJSON *obj)
{
	char path[PATH_MAX + WINACCOUNT_NAME_LEN];
	cJSON *list;

	cJSON_AddStringToObject(obj, "fate", window_fate_name(a->fate));
	if (a->ended)
		cJSON_AddStringToObject(obj, "ended", a->ended);
	list = cJSON_AddArrayToObject(obj, "prof");
	for (int i = 0; list && i < a->nprof; i++) {
		snprintf(path, sizeof(path), "%s/%s", output, a->prof[i]);
		cJSON_AddItemToArray(list, cJSON_CreateString(path));
	}
	if (a->fate != WINDOW_SAVED && a->reason[0]) {
		char *safe = text_escape_dup(a->reason); /* it may quote a target's paths */

		cJSON_AddStringToObject(obj, "reason", safe ? safe : "(out of memory)");
		free(safe);
	}
	if (a->host_lost)
		json_add_int64(obj, "host_lost", (int64_t)a->host_lost);
	if (a->opened_us)
		json_add_int64(obj, "opened_us", a->opened_us);
	json_add_int64(obj, "closed_us", a->closed_us);
}

int winaccount_record_line(const char *output, cJSON *obj)
{
	char name[64], *text = cJSON_PrintUnformatted(obj);
	int fd, rc = 0;
	size_t n;

	if (!text)
		return -ENOMEM;
	snprintf(name, sizeof(name), "%d_dynprof_windows", (int)getpid());
	fd = output_open_file(output, name);
	if (fd < 0) {
		free(text);
		return fd;
	}
	n = strlen(text);
	text[n] = '\n'; /* the terminating NUL becomes the newline: one write, one whole line */
	errno = 0;
	if (write(fd, text, n + 1) != (ssize_t)(n + 1))
		rc = errno ? -errno : -EIO;
	if (close(fd) && !rc)
		rc = -errno;
	free(text);
	return rc;
}

static void add_escaped(cJSON *o, const char *key, const char *text)
{
	char *safe = text_escape_dup(text);

	cJSON_AddStringToObject(o, key, safe ? safe : "(out of memory)");
	free(safe);
}

void winaccount_origin_to_json(cJSON *obj, int nspid, const char *container, const char *command)
{
	cJSON_AddNumberToObject(obj, "nspid", nspid);
	if (container && container[0])
		add_escaped(obj, "container", container);
	else
		cJSON_AddNullToObject(obj, "container");
	add_escaped(obj, "command", command ? command : "");
}
