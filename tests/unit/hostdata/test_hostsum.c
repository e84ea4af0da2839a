// SPDX-License-Identifier: MIT
/*
 * The window-close event's "host" member (hostsum.c, docs/EVENTS-JSON.md):
 * per thread and call, from a window's records.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include <cjson/cJSON.h>

#include "hostdata/hostdata_impl.h"
#include "unit.h"

static struct dp_osrt_call rec(uint32_t tid, uint32_t nr, uint64_t dur, int64_t ret, const char *comm)
{
	struct dp_osrt_call c = { .tgid = 100, .tid = tid, .nr = nr, .dur_ns = dur, .ret = ret };

	strncpy(c.comm, comm, sizeof(c.comm));
	return c;
}

static const cJSON *thread_of(const cJSON *root, int tid)
{
	const cJSON *t;

	cJSON_ArrayForEach(t, cJSON_GetObjectItem(root, "threads")) if (cJSON_GetNumberValue(
										cJSON_GetObjectItem(t, "tid")) ==
									tid) return t;
	return NULL;
}

static const cJSON *call_of(const cJSON *thread, const char *name)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, cJSON_GetObjectItem(thread, "calls")) if (!strcmp(cJSON_GetStringValue(
											cJSON_GetObjectItem(c, "name")),
										name)) return c;
	return NULL;
}

static double num(const cJSON *o, const char *key)
{
	return cJSON_GetNumberValue(cJSON_GetObjectItem(o, key));
}

TEST(calls_are_summed_per_thread_and_name_largest_total_first)
{
	struct dp_osrt_call calls[] = {
		rec(7, SYS_read, 100, 1, "worker"),
		rec(5, SYS_futex, 5000, 0, "main"),
		rec(7, SYS_read, 300, -11, "worker"),
		rec(5, DP_OSRT_PTH_NR | 1, 2000, 0, "main"),
		rec(7, SYS_write, 1000, -4096, "worker"), /* not an error: below -4095 */
		rec(5, DP_OSRT_PTH_NR | 3, 10, 22, "main"),
		rec(7, 999, 1, 0, "a b:\"c"),
	};
	struct hd_window w = { .pid = 100, .calls = calls, .ncalls = 7, .kernel_lost = 2, .over_cap = 1 };
	cJSON *root = hd_summary_json(&w);
	const cJSON *t5, *t7, *c;

	REQUIRE(root);
	CHECK(num(root, "system_calls") == 5);
	CHECK(num(root, "pthread_calls") == 2);
	CHECK(num(root, "lost") == 3);
	CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItem(root, "threads")), 2);
	t5 = thread_of(root, 5);
	t7 = thread_of(root, 7);
	REQUIRE(t5 && t7);
	/* the tids in order, the calls by total time */
	CHECK(num(cJSON_GetArrayItem(cJSON_GetObjectItem(root, "threads"), 0), "tid") == 5);
	CHECK_STR(cJSON_GetStringValue(
			  cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(t7, "calls"), 0),
					      "name")),
		  "write");
	c = call_of(t7, "read");
	REQUIRE(c);
	CHECK(num(c, "count") == 2 && num(c, "errors") == 1 && num(c, "total_ns") == 400 &&
	      num(c, "max_ns") == 300);
	c = call_of(t7, "write");
	REQUIRE(c);
	CHECK(num(c, "errors") == 0);
	CHECK(call_of(t7, "syscall_999") != NULL);
	c = call_of(t5, "pthread_create");
	REQUIRE(c);
	CHECK(num(c, "count") == 1 && num(c, "errors") == 0);
	c = call_of(t5, "pthread_mutex_init");
	REQUIRE(c);
	CHECK(num(c, "errors") == 1); /* a pthread call's non-zero return is its errno */
	/* the thread's last comm, one printable word */
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(t7, "comm")), "a_b_\"c");
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(t5, "comm")), "main");
	CHECK(w.by_thread); /* the files would have to sort them back */
	cJSON_Delete(root);
}

TEST(a_window_without_calls_has_no_threads)
{
	struct hd_window w = { .pid = 100 };
	cJSON *root = hd_summary_json(&w);

	REQUIRE(root);
	CHECK(num(root, "system_calls") == 0);
	CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItem(root, "threads")), 0);
	CHECK(!cJSON_GetObjectItem(root, "pthread_error"));
	cJSON_Delete(root);
}

UNIT_MAIN()
