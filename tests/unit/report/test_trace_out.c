// SPDX-License-Identifier: MIT
/* report/trace_out.c: the run's Chrome Trace Event file, read back as JSON. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "report/trace_out.h"
#include "unit.h"

static int tmp_fd = -1;

/* A trace into an anonymous file (its fd kept to read back after trace_close). */
static int start(uint64_t fold_ns)
{
	int fd = memfd_create("trace", MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	tmp_fd = dup(fd);
	return trace_open(fd, fold_ns);
}

/* The closed trace's text (free it), or NULL. */
static char *finish_text(struct trace_totals *t)
{
	off_t n;
	char *text = NULL;

	if (!trace_close(t) && (n = lseek(tmp_fd, 0, SEEK_END)) > 0 &&
	    (text = calloc(1, (size_t)n + 1)) && pread(tmp_fd, text, (size_t)n, 0) != n) {
		free(text);
		text = NULL;
	}
	close(tmp_fd);
	return text;
}

/* The closed trace parsed: an array of events, or NULL when it is not JSON. */
static cJSON *finish(struct trace_totals *t)
{
	char *text = finish_text(t);
	cJSON *root = text ? cJSON_Parse(text) : NULL;

	free(text);
	return cJSON_IsArray(root) ? root : (cJSON_Delete(root), NULL);
}

/*
 * How often needle occurs in text. By hand, not strstr: a sanitizer's
 * strstr measures the rest of the text at every call, which over half a
 * million events is quadratic.
 */
static size_t occurrences(const char *text, const char *needle)
{
	size_t n = 0, len = strlen(text), k = strlen(needle);

	for (size_t i = 0; k && i + k <= len; i++)
		if (text[i] == needle[0] && !memcmp(text + i, needle, k)) {
			n++;
			i += k - 1;
		}
	return n;
}

static const char *str(const cJSON *e, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, key);

	return cJSON_IsString(v) ? v->valuestring : "";
}

static double num(const cJSON *e, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, key);

	return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

/* Events of phase ph (and name, unless NULL) for pid. */
static int count(const cJSON *root, const char *ph, const char *name, int pid)
{
	const cJSON *e;
	int n = 0;

	cJSON_ArrayForEach(e, root) n += !strcmp(str(e, "ph"), ph) &&
					 (!name || !strcmp(str(e, "name"), name)) &&
					 num(e, "pid") == pid;
	return n;
}

/* The first event of phase ph named name for pid; NULL: none. */
static const cJSON *find(const cJSON *root, const char *ph, const char *name, int pid)
{
	const cJSON *e;

	cJSON_ArrayForEach(e, root) if (!strcmp(str(e, "ph"), ph) && !strcmp(str(e, "name"), name) &&
					num(e, "pid") == pid) return e;
	return NULL;
}

TEST(off_until_opened)
{
	CHECK(!trace_enabled());
	trace_target(5, NULL, "x"); /* nothing to write into: no crash */
	trace_call(5, 5, "read", 1, 2);
	CHECK_INT(trace_close(NULL), 0);
}

TEST(windows_instants_and_lanes_are_valid_json)
{
	struct trace_totals t;
	const cJSON *e, *args;
	cJSON *root;

	REQUIRE(start(TRACE_DEFAULT_FOLD_NS) == 0);
	CHECK(trace_enabled());
	trace_target(42, "web-1", "python3 train.py");
	trace_window_open(42);
	trace_trigger(42, 2, "start", "slow:libx.so:f>3x", false, 0, true, 5000000, 1000000);
	trace_trigger(42, 1, "stop", "call:libx.so:f#10", true, 10, false, 0, 0);
	trace_window_close(42, 0, "incomplete", "PROF_x has no host/end_info");
	trace_window_open(42);
	trace_instant(0, "error", "message", "something failed");
	REQUIRE((root = finish(&t)) != NULL);
	CHECK(t.windows == 2);
	e = find(root, "M", "process_name", 42);
	REQUIRE(e);
	CHECK(!strcmp(str(cJSON_GetObjectItem(e, "args"), "name"), "pid 42: python3 train.py [web-1]"));
	CHECK_INT(count(root, "X", "window 1 (incomplete)", 42), 1);
	/* Still open at the end: drawn, said so. */
	CHECK_INT(count(root, "X", "window 2 (open at end)", 42), 1);
	e = find(root, "X", "window 1 (incomplete)", 42);
	REQUIRE(e);
	CHECK(num(e, "tid") == TRACE_WINDOWS_TID);
	CHECK(!strcmp(str(cJSON_GetObjectItem(e, "args"), "reason"), "PROF_x has no host/end_info"));
	e = find(root, "i", "rule 2 start", 42);
	REQUIRE(e);
	args = cJSON_GetObjectItem(e, "args");
	CHECK(num(args, "measured_us") == 5000 && num(args, "typical_us") == 1000);
	CHECK(!strcmp(str(args, "condition"), "slow:libx.so:f>3x"));
	e = find(root, "i", "rule 1 stop", 42);
	REQUIRE(e);
	CHECK(num(cJSON_GetObjectItem(e, "args"), "count") == 10);
	/* Not about one target: dynprof's own lane, which also holds the rule. */
	CHECK_INT(count(root, "i", "error", (int)getpid()), 1);
	CHECK_INT(count(root, "i", "trace rule", (int)getpid()), 1);
	CHECK_INT(count(root, "M", "thread_name", 42), 1);
	cJSON_Delete(root);
}

TEST(hostile_command_and_comm_stay_one_string)
{
	/* A command line that would close the string and add an event if written raw. */
	static const char evil[] = "x\"}},{\"ph\":\"X\",\"name\":\"fake\"\n\\\x01\x7f\xff\xfe";
	const cJSON *e;
	cJSON *root;
	int n = 0;

	REQUIRE(start(0) == 0);
	trace_target(7, "c\"]", evil);
	trace_thread(7, 8, "w\"or\\ker\n");
	trace_call(7, 8, evil, 1000, 2000);
	REQUIRE((root = finish(NULL)) != NULL);
	CHECK_INT(count(root, "X", "fake", 7), 0);
	e = find(root, "M", "process_name", 7);
	REQUIRE(e);
	/* Quotes and backslashes kept, control bytes and bytes from 0x7f as \xHH: ASCII only. */
	CHECK(!strcmp(str(cJSON_GetObjectItem(e, "args"), "name"),
		      "pid 7: x\"}},{\"ph\":\"X\",\"name\":\"fake\"\\x0a\\\\x01\\x7f\\xff\\xfe [c\"]]"));
	cJSON_ArrayForEach(e, root)
	{
		const char *s = cJSON_PrintUnformatted(e);

		for (const char *c = s; c && *c; c++)
			n += (unsigned char)*c >= 0x80 || (unsigned char)*c < 0x20;
		free((void *)s);
	}
	CHECK_INT(n, 0);
	CHECK_INT(count(root, "M", "thread_name", 7), 2); /* windows lane and the thread */
	CHECK_INT(count(root, "X", NULL, 7), 1);
	cJSON_Delete(root);
}

TEST(short_calls_are_counted_per_interval_not_drawn)
{
	const uint64_t ms = 1000000, base = 1000 * TRACE_FOLD_INTERVAL_NS;
	struct trace_totals t;
	const cJSON *e;
	double points[8][2];
	int n = 0;
	cJSON *root;

	REQUIRE(start(100000) == 0); /* 100 us */
	trace_thread(9, 10, "worker");
	trace_call(9, 10, "read", base + 1 * ms, 50000);   /* folded */
	trace_call(9, 10, "read", base + 2 * ms, 99999);   /* folded: under the threshold */
	trace_call(9, 10, "futex", base + 3 * ms, 100000); /* drawn: at the threshold */
	trace_call(9, 11, "read", base + 4 * ms, 10000); /* folded, another thread, same process */
	trace_call(9, 10, "read", base + 25 * ms, 1000); /* folded, two intervals later */
	trace_calls_end(9);
	trace_thread(9, 10, "worker"); /* named once */
	REQUIRE((root = finish(&t)) != NULL);
	CHECK(t.slices == 1 && t.folded == 4 && t.over_cap == 0);
	CHECK_INT(count(root, "X", "futex", 9), 1);
	CHECK_INT(count(root, "X", "read", 9), 0);
	e = find(root, "X", "futex", 9);
	REQUIRE(e);
	CHECK(num(e, "ts") == (double)(base + 3 * ms) / 1000 && num(e, "dur") == 100);
	CHECK(num(e, "tid") == 10);
	CHECK_INT(count(root, "M", "thread_name", 9), 2);
	cJSON_ArrayForEach(e, root) if (!strcmp(str(e, "ph"), "C") &&
					!strcmp(str(e, "name"), "folded calls") && n < 8)
	{
		points[n][0] = num(e, "ts");
		points[n++][1] = num(cJSON_GetObjectItem(e, "args"), "calls");
	}
	/* 3 in [base, base+10ms), then 0; 1 in [base+20ms, base+30ms), then 0. */
	REQUIRE(n == 4);
	CHECK(points[0][0] == base / 1000 && points[0][1] == 3);
	CHECK(points[1][0] == (base + 10 * ms) / 1000 && points[1][1] == 0);
	CHECK(points[2][0] == (base + 20 * ms) / 1000 && points[2][1] == 1);
	CHECK(points[3][0] == (base + 30 * ms) / 1000 && points[3][1] == 0);
	cJSON_Delete(root);
}

TEST(past_the_slice_limit_every_call_is_folded)
{
	struct trace_totals t;
	char *text;

	REQUIRE(start(0) == 0); /* nothing folded by duration */
	for (uint64_t i = 0; i < TRACE_MAX_SLICES + 3; i++)
		trace_call(3, 3, "getppid", 1000000 + i * 1000, 500);
	trace_calls_end(3);
	/* Counted in the text: half a million events parsed would cost ~200 MiB (more under ASan). */
	REQUIRE((text = finish_text(&t)) != NULL);
	CHECK(t.slices == TRACE_MAX_SLICES && t.over_cap == 3 && t.folded == 0);
	CHECK(occurrences(text, "{\"ph\":\"X\",\"pid\":3,\"tid\":3,\"name\":\"getppid\"") ==
	      TRACE_MAX_SLICES);
	/* The 3 past the limit: one interval's count, then its 0. */
	CHECK(occurrences(text, "\"name\":\"folded calls\"") == 2);
	CHECK(strstr(text, "\"args\":{\"calls\":3}") != NULL);
	free(text);
}

TEST(counters_are_numbers_even_when_not_finite)
{
	const cJSON *e;
	cJSON *root;

	REQUIRE(start(TRACE_DEFAULT_FOLD_NS) == 0);
	trace_counter(4, "memory MiB", 5000, 12.5);
	trace_counter(4, "cpu %", 6000, 1.0 / 0.0);
	REQUIRE((root = finish(NULL)) != NULL);
	e = find(root, "C", "memory MiB", 4);
	REQUIRE(e);
	CHECK(num(cJSON_GetObjectItem(e, "args"), "memory MiB") == 12.5 && num(e, "ts") == 5);
	e = find(root, "C", "cpu %", 4);
	REQUIRE(e);
	CHECK(num(cJSON_GetObjectItem(e, "args"), "cpu %") == 0);
	cJSON_Delete(root);
}

TEST(a_failed_write_is_reported_at_close)
{
	int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
	struct trace_totals t;

	REQUIRE(fd >= 0);
	REQUIRE(trace_open(fd, 0) == 0);
	for (int i = 0; i < 10000; i++)
		trace_call(2, 2, "read", (uint64_t)i * 1000, 500);
	CHECK(trace_close(&t) < 0);
	CHECK(t.write_error != 0);
	CHECK(!trace_enabled());
}

UNIT_MAIN()
