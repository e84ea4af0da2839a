// SPDX-License-Identifier: MIT
/*
 * A window's calls per thread and per call, as `strace -c -f` would give
 * them thread by thread, for the window-close event's "host" member
 * (docs/EVENTS-JSON.md). System calls and the pthread calls alike, by name.
 */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "hostdata/hostdata_impl.h"
#include "hostdata/hostfmt.h"
#include "report/escape.h"

static int by_thread_call(const void *a, const void *b)
{
	const struct dp_osrt_call *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->nr < y->nr ? -1 : x->nr > y->nr;
}

/* One call's totals over calls[0..n) (all of one thread and number). */
static cJSON *call_json(const struct dp_osrt_call *calls, size_t n)
{
	struct hostfmt_callstat st = { 0 };
	char buf[32];
	cJSON *o = cJSON_CreateObject();

	for (size_t i = 0; i < n; i++) {
		st.calls++;
		st.errors += !DP_OSRT_IS_PTH(calls[i].nr) ? calls[i].ret < 0 && calls[i].ret > -4096 :
							    calls[i].ret != 0; /* pthread: an errno */
		st.total_ns += calls[i].dur_ns;
		st.max_ns = calls[i].dur_ns > st.max_ns ? calls[i].dur_ns : st.max_ns;
	}
	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "name", hd_call_name(calls[0].nr, buf, sizeof(buf)));
	cJSON_AddNumberToObject(o, "count", (double)st.calls);
	cJSON_AddNumberToObject(o, "errors", (double)st.errors);
	cJSON_AddNumberToObject(o, "total_ns", (double)st.total_ns);
	cJSON_AddNumberToObject(o, "max_ns", (double)st.max_ns);
	return o;
}

/* Largest total time first, as the summary file and the console order them. */
static int by_total(const void *a, const void *b)
{
	double x = cJSON_GetNumberValue(cJSON_GetObjectItem(*(cJSON *const *)a, "total_ns"));
	double y = cJSON_GetNumberValue(cJSON_GetObjectItem(*(cJSON *const *)b, "total_ns"));

	return x > y ? -1 : x < y;
}

/* The thread of calls[0..n): its tid, comm (one word) and calls, sorted. */
static cJSON *thread_json(const struct dp_osrt_call *calls, size_t n)
{
	cJSON *o = cJSON_CreateObject(), *list = cJSON_CreateArray(), **items;
	size_t nitems = 0;
	char comm[32];

	items = calloc(n, sizeof(*items));
	if (!o || !list || !items) {
		cJSON_Delete(o);
		cJSON_Delete(list);
		free(items);
		return NULL;
	}
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && calls[j].nr == calls[i].nr; j++)
			;
		if ((items[nitems] = call_json(calls + i, j - i)))
			nitems++;
	}
	qsort(items, nitems, sizeof(*items), by_total);
	for (size_t i = 0; i < nitems; i++)
		cJSON_AddItemToArray(list, items[i]);
	free(items);
	/* A target's text: one printable word, as the data files write it. */
	hostfmt_comm(calls[n - 1].comm, sizeof(calls[n - 1].comm), comm, sizeof(comm));
	cJSON_AddNumberToObject(o, "tid", calls[0].tid);
	cJSON_AddStringToObject(o, "comm", comm);
	cJSON_AddItemToObject(o, "calls", list);
	return o;
}

cJSON *hd_summary_json(struct hd_window *w)
{
	cJSON *root = cJSON_CreateObject(), *threads = cJSON_CreateArray();
	size_t npth = 0;

	if (!root || !threads) {
		cJSON_Delete(root);
		cJSON_Delete(threads);
		return NULL;
	}
	if (w->ncalls)
		qsort(w->calls, w->ncalls, sizeof(*w->calls), by_thread_call);
	w->by_thread = true;
	for (size_t i = 0, j; i < w->ncalls; i = j) {
		cJSON *t;

		for (j = i + 1; j < w->ncalls && w->calls[j].tid == w->calls[i].tid; j++)
			;
		if ((t = thread_json(w->calls + i, j - i)))
			cJSON_AddItemToArray(threads, t);
	}
	for (size_t i = 0; i < w->ncalls; i++)
		npth += DP_OSRT_IS_PTH(w->calls[i].nr);
	cJSON_AddNumberToObject(root, "system_calls", (double)(w->ncalls - npth));
	cJSON_AddNumberToObject(root, "pthread_calls", (double)npth);
	cJSON_AddNumberToObject(root, "lost", (double)(w->kernel_lost + w->over_cap));
	if (w->pth_why[0]) { /* it may hold a path of the target's: escaped as every event text */
		char *safe = text_escape_dup(w->pth_why);

		if (safe)
			cJSON_AddStringToObject(root, "pthread_error", safe);
		free(safe);
	}
	cJSON_AddItemToObject(root, "threads", threads);
	return root;
}
