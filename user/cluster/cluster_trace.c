// SPDX-License-Identifier: MIT
/*
 * --trace=on across a job's nodes (see cluster_trace.h). Each node's copy
 * writes its own trace (report/trace_out.c) on its own CLOCK_MONOTONIC,
 * whose header instant ("trace rule") carries the CLOCK_REALTIME of the
 * same moment (wall_us). Once every node ended, the coordinator reads
 * each node's trace of this run from --output/<node>/ and writes one file
 * of them all on its own CLOCK_MONOTONIC: an event's time on its node's
 * clock, plus (its node's wall_us - ts at the header), minus the same
 * for the coordinator, is its time on the coordinator's clock. So nodes
 * whose wall clocks agree (NTP) line up. Each node's pids are moved into
 * a range of its own ((node index + 1) << 22, pids being below 2^22) and
 * its processes' names get "[node] " before them: two nodes' pid 42 are
 * two lanes. The node files are our own copies' writing, but read as any
 * file in --output is read: through the folder's fd, no symlink, regular
 * files only, a line at most TRACE_LINE_MAX bytes, each line parsed alone.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cluster/cluster_trace.h"
#include "report/report.h"
#include "results/output.h"
#include "shared/clock.h"

#define TRACE_LINE_MAX (1 << 20) /* one event; ours are a few hundred bytes */
#define NODE_PID_SHIFT 22        /* pids are below 2^22 (pid_max's ceiling) */
#define SUFFIX "_dynprof_trace.json"

struct merge {
	FILE *out;
	bool first;
	int64_t coord_offset_us; /* the coordinator's wall_us - CLOCK_MONOTONIC µs */
	uint64_t events, bad;
};

static void put_event(struct merge *m, const cJSON *ev)
{
	char *text = cJSON_PrintUnformatted(ev);

	if (!text) {
		m->bad++;
		return;
	}
	fputs(m->first ? "\n" : ",\n", m->out);
	fputs(text, m->out);
	m->first = false;
	m->events++;
	free(text);
}

/* The header instant's offset (wall_us - ts), when ev is it. */
static bool header_offset(const cJSON *ev, int64_t *offset_us)
{
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(ev, "name");
	const cJSON *ts = cJSON_GetObjectItemCaseSensitive(ev, "ts");
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
	const cJSON *wall = cJSON_GetObjectItemCaseSensitive(args, "wall_us");

	if (!cJSON_IsString(name) || strcmp(name->valuestring, "trace rule") ||
	    !cJSON_IsNumber(ts) || !cJSON_IsNumber(wall))
		return false;
	*offset_us = (int64_t)wall->valuedouble - (int64_t)ts->valuedouble;
	return true;
}

/* One node's event onto the coordinator's lanes and clock; false: not an event of ours. */
static bool move_event(cJSON *ev, const char *node, int index, int64_t shift_us)
{
	cJSON *pid = cJSON_GetObjectItemCaseSensitive(ev, "pid");
	cJSON *ts = cJSON_GetObjectItemCaseSensitive(ev, "ts");
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(ev, "name");
	cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
	cJSON *pname = cJSON_GetObjectItemCaseSensitive(args, "name");
	char label[512];

	if (!cJSON_IsNumber(pid) || pid->valuedouble < 0 || pid->valuedouble >= (1 << NODE_PID_SHIFT))
		return false;
	cJSON_SetNumberValue(pid, (double)(((int64_t)(index + 1) << NODE_PID_SHIFT) +
					   (int64_t)pid->valuedouble));
	if (cJSON_IsNumber(ts))
		cJSON_SetNumberValue(ts, ts->valuedouble + (double)shift_us);
	if (cJSON_IsString(name) && !strcmp(name->valuestring, "process_name") && cJSON_IsString(pname)) {
		snprintf(label, sizeof(label), "[%s] %s", node, pname->valuestring);
		cJSON_ReplaceItemInObjectCaseSensitive(args, "name", cJSON_CreateString(label));
	}
	return true;
}

/* Strip the array's punctuation around one event's line; NULL when the line holds none. */
static char *event_text(char *line)
{
	size_t n = strlen(line);

	while (n && (line[n - 1] == '\n' || line[n - 1] == ',' || line[n - 1] == ' '))
		line[--n] = '\0';
	while (*line == '[' || *line == ' ')
		line++;
	return *line == '{' ? line : NULL;
}

/* One node's trace file into the merge; the events taken. */
static uint64_t merge_file(struct merge *m, FILE *in, const char *node, int index)
{
	int64_t offset_us = 0;
	bool anchored = false;
	uint64_t taken = 0;
	char *line = NULL, *text;
	size_t cap = 0;
	ssize_t n;

	while ((n = getline(&line, &cap, in)) > 0) {
		cJSON *ev;

		if (n > TRACE_LINE_MAX || !(text = event_text(line)))
			continue;
		ev = cJSON_Parse(text);
		if (!cJSON_IsObject(ev)) {
			m->bad++;
			cJSON_Delete(ev);
			continue;
		}
		if (!anchored)
			anchored = header_offset(ev, &offset_us);
		if (move_event(ev, node, index, anchored ? offset_us - m->coord_offset_us : 0)) {
			put_event(m, ev);
			taken++;
		} else
			m->bad++;
		cJSON_Delete(ev);
	}
	free(line);
	return taken;
}

/* A regular file of ours in dir, not older than the run; NULL when not. */
static FILE *open_node_trace(int dir, const char *name, int64_t since_wall_us)
{
	struct stat st;
	int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	FILE *f;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (int64_t)st.st_mtim.tv_sec * 1000000 + st.st_mtim.tv_nsec / 1000 < since_wall_us ||
	    !(f = fdopen(fd, "r"))) {
		close(fd);
		return NULL;
	}
	return f;
}

/* Every trace of this run in the node's folder; the events taken, -1 when there is none. */
static int64_t merge_node(struct merge *m, const char *output, const char *node, int index,
			  int64_t since_wall_us)
{
	char path[PATH_MAX];
	int64_t taken = -1;
	struct dirent *e;
	DIR *d;
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%.*s/%s", PATH_MAX - CLUSTER_NAME_MAX - 2, output,
			     node) >= sizeof(path))
		return -1;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		FILE *f;

		if (len <= strlen(SUFFIX) || strcmp(e->d_name + len - strlen(SUFFIX), SUFFIX))
			continue;
		f = open_node_trace(dirfd(d), e->d_name, since_wall_us);
		if (!f)
			continue;
		taken = (taken < 0 ? 0 : taken) + (int64_t)merge_file(m, f, node, index);
		fclose(f);
	}
	closedir(d);
	return taken;
}

/* The coordinator's own lane: its name and the merge's anchor, as a node's header. */
static void put_header(struct merge *m, int nodes)
{
	int64_t mono_us = (int64_t)(clock_mono_ns() / 1000), wall_us = clock_wall_us();

	m->coord_offset_us = wall_us - mono_us;
	fprintf(m->out,
		"[\n{\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":\"dynprof (coordinator)\"}},"
		"\n{\"ph\":\"i\",\"pid\":%d,\"tid\":0,\"s\":\"g\",\"name\":\"trace merge\",\"ts\":%" PRId64
		",\"args\":{\"nodes\":%d,\"clock\":\"CLOCK_MONOTONIC\",\"wall_us\":%" PRId64 "}}",
		(int)getpid(), (int)getpid(), mono_us, nodes, wall_us);
	m->first = false;
}

static FILE *open_merged(const char *output, char path[PATH_MAX], size_t len)
{
	char name[64];
	int fd;

	snprintf(name, sizeof(name), "%d" SUFFIX, (int)getpid());
	snprintf(path, len, "%.*s/%s", PATH_MAX - 80, output, name);
	fd = output_open_file(output, name);
	if (fd >= 0 && ftruncate(fd, 0)) {
		close(fd);
		fd = -errno;
	}
	if (fd < 0) {
		report_error("dynprof: --trace: cannot write %s: %s", path, strerror(-fd));
		return NULL;
	}
	return fdopen(fd, "w");
}

void cluster_trace_merge(const struct options *o, const struct cluster_plan *p, int64_t since_wall_us)
{
	struct merge m = { .first = true };
	char path[PATH_MAX], missing[512] = "";
	size_t used = 0;
	int merged = 0;

	if (!o->trace)
		return;
	m.out = open_merged(p->output, path, sizeof(path));
	if (!m.out)
		return;
	put_header(&m, p->n);
	for (int i = 0; i < p->n; i++) {
		int64_t got = merge_node(&m, p->output, p->names[i], i, since_wall_us);

		if (got >= 0)
			merged++;
		else if (used < sizeof(missing) - 64)
			used += (size_t)snprintf(missing + used, sizeof(missing) - used, "%s%s",
						 used ? ", " : "", p->names[i]);
	}
	fputs("\n]\n", m.out);
	if (fclose(m.out))
		report_warning("dynprof: --trace: %s is incomplete: %s", path, strerror(errno));
	report_info("--trace: %s: %d of %d nodes' traces on one clock (this host's CLOCK_MONOTONIC, through each node's CLOCK_REALTIME), %" PRIu64
		    " events, %" PRIu64 " lines left out%s%s%s",
		    path, merged, p->n, m.events, m.bad, used ? "; no trace of this run from " : "",
		    missing, used ? " (in --output/<node>/: not a filesystem the nodes share?)" : "");
}
