// SPDX-License-Identifier: MIT
/* The PROF_ folder of a window (see profdir.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "agent/config.h"
#include "shared/ctlfile.h"
#include "shared/hostinfo.h"
#include "shared/profhost.h"
#include "agent/params.h"
#include "agent/profdir.h"
#include "shared/clock.h"
#include "shared/mkdirp.h"

int profdir_open(struct profdir *pd, int v1_name, const char *params_json, int chip)
{
	struct profhost_desc d = {
		.pid = getpid(), .net_dev = "/proc/self/net/dev", .chip = chip, .v1_name = v1_name
	};
	char result_dir[PATH_MAX];
	char *sample;
	int rc;

	/* As CANN, each START parses its connection's params into the kept set. */
	rc = agent_params_apply(v1_name ? PROTO_V1 : PROTO_V2, params_json);
	if (!rc)
		rc = agent_params_result_dir(result_dir, sizeof(result_dir));
	if (!rc)
		rc = mkdir_p(result_dir, PROFHOST_MODE); /* the client names it as this process sees it */
	if (rc)
		return rc;
	sample = profhost_sample_json(params_json);
	d.sample = sample;
	rc = sample ? profhost_open(&pd->host, result_dir, &d) : -ENOMEM;
	free(sample);
	/* Not a CANN file: what the server ended up with, for tests and users to check. */
	if (!rc)
		rc = profhost_write(&pd->host, PROFDIR_EFFECTIVE_PARAMS, agent_params_effective_json());
	return rc;
}

int profdir_close(const struct profdir *pd)
{
	return profhost_close(&pd->host);
}

int profdir_note(const struct profdir *pd, const char *name, const char *text)
{
	char path[PATH_MAX];
	size_t len = strlen(text);
	ssize_t n;
	int fd, rc = 0;

	if (snprintf(path, sizeof(path), "%s/host/%s", pd->host.path, name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, CTLFILE_MODE);
	if (fd < 0)
		return -errno;
	n = write(fd, text, len);
	if (n != (ssize_t)len)
		rc = n < 0 ? -errno : -EIO;
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	return rc;
}
