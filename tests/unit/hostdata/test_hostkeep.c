// SPDX-License-Identifier: MIT
/*
 * --host-sys-before's keeper (hostkeep.c): calls older than its span let
 * go uncounted, those its cap pushes out within the span counted, and a
 * window given exactly the calls since its begin with its span's drops.
 */
#include <stdlib.h>
#include <string.h>

#include "config/hostsys.h"
#include "hostdata/hostdata_impl.h"
#include "unit.h"

#define MS 1000000ull

static struct dp_osrt_call at(uint64_t entry_ns)
{
	return (struct dp_osrt_call){
		.tgid = 100, .tid = 101, .entry_ns = entry_ns, .dur_ns = 1000, .nr = 0
	};
}

static struct hd_window window_from(uint64_t begin_mono)
{
	return (struct hd_window){ .pid = 100, .what = HOSTSYS_OSRT, .begin_mono = begin_mono, .kept = true };
}

TEST(calls_older_than_the_span_are_let_go_not_counted)
{
	struct hd_keep *k = hd_keep_new(100, HOSTSYS_OSRT, 1000 * MS);
	struct hd_window w = window_from(0);

	REQUIRE(k);
	for (uint64_t t = 1; t <= 3000; t++) /* one a ms for 3 s */
		hd_keep_call(k, &(struct dp_osrt_call){ .tgid = 100, .entry_ns = t * MS, .dur_ns = 1000 });
	/* the last second's (1001 of them: 2000 ms to 3000 ms), none dropped */
	CHECK(k->n >= 1000 && k->n <= 1001);
	hd_keep_give(k, &w, 3000 * MS);
	CHECK(w.ncalls == k->n);
	CHECK(w.before_dropped == 0);
	CHECK(w.calls && w.calls[0].entry_ns >= 1999 * MS);
	free(w.calls);
	hd_keep_free(k);
}

TEST(a_window_gets_the_calls_since_its_begin_only)
{
	struct hd_keep *k = hd_keep_new(100, HOSTSYS_OSRT, 10000 * MS);
	struct hd_window w = window_from(500 * MS);

	REQUIRE(k);
	for (uint64_t t = 1; t <= 1000; t++) {
		struct dp_osrt_call c = at(t * MS);

		hd_keep_call(k, &c);
	}
	hd_keep_give(k, &w, 1000 * MS);
	CHECK_INT((int)w.ncalls, 501); /* 500 ms to 1000 ms */
	CHECK_INT((int)w.before_calls, 501);
	size_t early = 0;

	for (size_t i = 0; i < w.ncalls; i++)
		early += w.calls[i].entry_ns < 500 * MS;
	CHECK_INT((int)early, 0);
	free(w.calls);
	hd_keep_free(k);
}

TEST(calls_the_cap_pushes_out_within_the_span_are_counted_for_the_windows_of_it)
{
	size_t n = HD_KEEP_MAX_CALLS + 1000;
	struct hd_keep *k = hd_keep_new(100, HOSTSYS_OSRT, 60000 * MS);
	struct hd_window all = window_from(0), late;

	REQUIRE(k);
	for (size_t i = 0; i < n; i++) { /* 1 µs apart: all within the span */
		struct dp_osrt_call c = at(1000 * MS + i * 1000);

		hd_keep_call(k, &c);
	}
	CHECK(k->n == HD_KEEP_MAX_CALLS);
	hd_keep_give(k, &all, 2000 * MS);
	CHECK(all.ncalls == HD_KEEP_MAX_CALLS);
	CHECK_INT((int)all.before_dropped, 1000); /* every one pushed out, none twice */
	CHECK(all.ncalls + all.before_dropped == n);
	/* A window whose span begins after the dropped ones (to one slot's width) counts none. */
	late = window_from(1000 * MS + (n / 2) * 1000);
	hd_keep_give(k, &late, 2000 * MS);
	CHECK_INT((int)late.before_dropped, 0);
	free(all.calls);
	free(late.calls);
	hd_keep_free(k);
}

TEST(kernel_losses_are_counted_by_when_they_were_seen)
{
	struct hd_keep *k = hd_keep_new(100, HOSTSYS_OSRT, 1000 * MS);
	struct hd_window early = window_from(100 * MS), late = window_from(700 * MS);

	REQUIRE(k);
	hd_keep_lost(k, 5, 200 * MS);
	hd_keep_lost(k, 5, 300 * MS); /* no growth: nothing new */
	hd_keep_lost(k, 12, 800 * MS);
	hd_keep_give(k, &early, 900 * MS);
	hd_keep_give(k, &late, 900 * MS);
	CHECK_INT((int)early.kernel_lost, 12);
	CHECK_INT((int)late.kernel_lost, 7);
	CHECK_INT((int)late.kernel_base, 12); /* its stop adds what grows past this */
	hd_keep_free(k);
}

UNIT_MAIN()
