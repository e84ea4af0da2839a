// SPDX-License-Identifier: MIT
/*
 * host_disk and host_network against msprof's grammar (docs/HOSTDATA.md),
 * each line read back the way msprof's parsers read it (split at blanks,
 * the words they index), and the /proc readers they are made from.
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostdata/hostfmt.h"
#include "shared/procnet.h"
#include "unit.h"

#define MAXW 24

/* s split at blanks, as Python's str.split(): the word count. */
static int split(const char *s, char w[MAXW][64])
{
	int n = 0;

	while (*s && n < MAXW) {
		size_t k;

		while (isspace((unsigned char)*s))
			s++;
		k = strcspn(s, " \t\r\n\v\f");
		if (!k)
			break;
		snprintf(w[n++], 64, "%.*s", (int)k, s);
		s += k;
	}
	return n;
}

static int all_digits(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

/* msprof's network reader on one line: 't' a block's head, 'i' an interface, 0 neither. */
static int msprof_net(const char *line, char *name, uint64_t *rx, uint64_t *tx)
{
	char w[MAXW][64];
	int n;

	if (!strncmp(line, "time", 4))
		return 't';
	n = split(line, w);
	if (n < 12 || !all_digits(w[1]) || !all_digits(w[9]))
		return 0;
	snprintf(name, 64, "%.*s", (int)strlen(w[0]) - 1, w[0]);
	*rx = strtoull(w[1], NULL, 10);
	*tx = strtoull(w[9], NULL, 10);
	return 'i';
}

TEST(a_network_head_is_time_and_the_raw_stamp)
{
	char buf[64], name[64];
	uint64_t rx, tx;

	REQUIRE(hostfmt_net_head(buf, sizeof(buf), 3169038136782ull) > 0);
	CHECK_STR(buf, "time 3169038136782\n");
	CHECK(msprof_net(buf, name, &rx, &tx) == 't');
}

TEST(an_interface_line_gives_msprof_its_name_rx_and_tx)
{
	uint64_t v[16], rx = 0, tx = 0;
	char buf[HOSTFMT_LINE_MAX], name[64];

	for (int i = 0; i < 16; i++)
		v[i] = 1000 + (uint64_t)i;
	v[0] = 123456789012ull; /* rx bytes */
	v[8] = 987654321098ull; /* tx bytes */
	REQUIRE(hostfmt_net_line(buf, sizeof(buf), "eth0", v) > 0);
	CHECK(buf[0] == ' ');
	CHECK(buf[strlen(buf) - 1] == '\n');
	REQUIRE(msprof_net(buf, name, &rx, &tx) == 'i');
	CHECK_STR(name, "eth0");
	CHECK(rx == v[0]);
	CHECK(tx == v[8]);
}

/* msprof takes any line beginning with "time" as a head: an interface "time0" must not begin one. */
TEST(an_interface_named_like_the_head_is_still_an_interface)
{
	uint64_t v[16] = { 5 }, rx, tx;
	char buf[HOSTFMT_LINE_MAX], name[64];

	REQUIRE(hostfmt_net_line(buf, sizeof(buf), "timeout_bridge0", v) > 0); /* 15: the longest */
	CHECK(msprof_net(buf, name, &rx, &tx) == 'i');
	CHECK_STR(name, "timeout_bridge0");
	CHECK(rx == 5);
}

TEST(an_interface_name_that_is_not_one_word_is_refused)
{
	uint64_t v[16] = { 0 };
	char buf[HOSTFMT_LINE_MAX];

	CHECK_INT(hostfmt_net_line(buf, sizeof(buf), "", v), -EINVAL);
	CHECK_INT(hostfmt_net_line(buf, sizeof(buf), "a b", v), -EINVAL);
	CHECK_INT(hostfmt_net_line(buf, sizeof(buf), "a:b", v), -EINVAL);
	CHECK_INT(hostfmt_net_line(buf, sizeof(buf), "a\nb", v), -EINVAL);
	CHECK_INT(hostfmt_net_line(buf, sizeof(buf), "sixteen_letters", v) > 0, 1);
	CHECK_INT(hostfmt_net_line(buf, sizeof(buf), "sixteen_letters_", v), -EINVAL);
	CHECK_INT(hostfmt_net_line(buf, 20, "lo", v), -ENOSPC);
}

/* msprof's disk reader on one line: 's' start_time, 'r' a row (rates in K/s), 0 skipped. */
static int msprof_disk(const char *line, uint64_t *start, double *r_k, double *w_k, int *pid,
		       int *unavailable, double *io)
{
	char w[MAXW][64];
	int n = split(line, w);
	double conv[2];

	if (n < 2 || !all_digits(w[1]))
		return 0;
	if (!strcmp(w[0], "start_time")) {
		*start = strtoull(w[1], NULL, 10);
		return 's';
	}
	if (n < 8)
		return 0;
	for (int i = 0; i < 2; i++) {
		const char *u = w[5 + 2 * i];

		conv[i] = !strcmp(u, "B/s") ? 1.0 / 1024 :
			  !strcmp(u, "M/s") ? 1024 :
			  !strcmp(u, "G/s") ? 1024.0 * 1024 :
					      1.0; /* K/s, and any unit it does not know */
	}
	*pid = atoi(w[1]);
	*r_k = strtod(w[4], NULL) * conv[0];
	*w_k = strtod(w[6], NULL) * conv[1];
	/* msprof: line.find('unavailable') > 0 or fewer than 11 words: swapin and io 0. */
	*unavailable = strstr(line, "unavailable") != NULL || n < 11;
	*io = *unavailable ? 0 : strtod(w[10], NULL);
	return 'r';
}

TEST(a_disk_row_gives_msprof_the_rates_of_one_period)
{
	char buf[HOSTFMT_LINE_MAX];
	double r, w;
	uint64_t st;
	int pid, unav;
	double io;

	/* 1 MiB written and 4 KiB read in 20 ms: 50 MiB/s and 200 KiB/s. */
	REQUIRE(hostfmt_disk_row(buf, sizeof(buf), 3723, 4321, 1000, 4096, 1048576,
				 HOSTFMT_IO_UNKNOWN, 20000000, "python") > 0);
	CHECK_STR(buf, "01:02:03 4321 ? 1000 204800.00 B/s 52428800.00 B/s ?unavailable? python\n");
	REQUIRE(msprof_disk(buf, &st, &r, &w, &pid, &unav, &io) == 'r');
	CHECK(pid == 4321);
	CHECK(r == 200.0);
	CHECK(w == 51200.0);
	CHECK(unav); /* swapin and io: msprof's 0, as from iotop without delay accounting */
}

/* The rows' rates times the period give back the bytes: what the integration test sums. */
TEST(a_disk_rate_keeps_the_bytes_of_its_period)
{
	char buf[HOSTFMT_LINE_MAX], w[MAXW][64];
	const uint64_t b[] = { 0, 1, 3, 4095, 8388608, 123456789 };

	for (size_t i = 0; i < sizeof(b) / sizeof(b[0]); i++) {
		REQUIRE(hostfmt_disk_row(buf, sizeof(buf), 0, 1, 0, 0, b[i], HOSTFMT_IO_UNKNOWN,
					 20000000, "x") > 0);
		REQUIRE(split(buf, w) >= 8);
		CHECK((uint64_t)(strtod(w[6], NULL) * 0.02 + 0.5) == b[i]);
	}
}

/*
 * A late sample (the collector held up) closes every period begun by then,
 * each a row, sharing the bytes: msprof's row i is at start + i periods, so
 * the rows keep their place and their sum.
 */
TEST(a_late_sample_fills_each_period_it_missed)
{
	const uint64_t p = 20000000, t0 = 1000000000;
	uint64_t rows = 0, sum = 0;
	/* Samples on time, one 19 ms early, one 70 ms late, one 9 ms after a row. */
	const uint64_t at[] = { t0 + p,
				t0 + 2 * p,
				t0 + 2 * p + 9000000,
				t0 + 3 * p + 1000000,
				t0 + 6 * p + 10000000,
				t0 + 7 * p - 1000000 };
	const uint64_t want[] = { 1, 2, 2, 3, 7, 7 };

	CHECK(hostfmt_disk_due(t0, t0, p) == 0);
	CHECK(hostfmt_disk_due(t0, t0 - 1, p) == 0);
	for (size_t s = 0; s < sizeof(at) / sizeof(at[0]); s++) {
		uint64_t n = hostfmt_disk_due(t0, at[s], p);

		CHECK(n == want[s]);
		if (n <= rows)
			continue; /* early: counted with the next */
		for (uint64_t i = 0; i < n - rows; i++)
			sum += hostfmt_disk_share(1000003, n - rows, i);
		rows = n;
		CHECK(sum == 1000003 * (s + 1) - 1000003 * (s >= 2));
	}
	CHECK(rows == 7);
	for (uint64_t i = 0; i < 4; i++)
		CHECK(hostfmt_disk_share(10, 4, i) == (i < 2 ? 3 : 2));
}

/* iotop's columns with the iowait measured: swapin 0.00 (no swap area), io its share of the period. */
TEST(a_disk_row_with_iowait_gives_msprof_its_io_percent)
{
	const struct {
		uint64_t io_ns;
		const char *io;
		double pct;
	} c[] = {
		{ 0, "0.00", 0 },
		{ 5000000, "25.00", 25 },           /* 5 ms of 20 */
		{ 1999, "0.01", 0.01 },             /* rounded to the hundredth */
		{ 19999000, "99.99", 99.99 },       /* iotop prints no more than 99.99 */
		{ 40000000, "99.99", 99.99 },       /* two threads asleep the whole period */
		{ UINT64_MAX - 1, "99.99", 99.99 }, /* no overflow */
	};
	char buf[HOSTFMT_LINE_MAX], w[MAXW][64], want[128];
	double r, wr, io;
	uint64_t st;
	int pid, unav;

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		REQUIRE(hostfmt_disk_row(buf, sizeof(buf), 3723, 4321, 1000, 4096, 0, c[i].io_ns,
					 20000000, "python") > 0);
		snprintf(want, sizeof(want),
			 "01:02:03 4321 ? 1000 204800.00 B/s 0.00 B/s 0.00 %% %s %% python\n", c[i].io);
		CHECK_STR(buf, want);
		CHECK_INT(split(buf, w), 13);
		REQUIRE(msprof_disk(buf, &st, &r, &wr, &pid, &unav, &io) == 'r');
		CHECK(!unav);
		CHECK(io == c[i].pct);
		CHECK(r == 200.0);
	}
}

/* msprof zeroes swapin and io on any line holding "unavailable": a comm's would hide the io. */
TEST(a_comm_holding_unavailable_does_not_hide_the_io)
{
	char buf[HOSTFMT_LINE_MAX], w[MAXW][64];
	double r, wr, io;
	uint64_t st;
	int pid, unav;

	REQUIRE(hostfmt_disk_row(buf, sizeof(buf), 0, 7, 0, 0, 0, 10000000, 20000000, "unavailable") > 0);
	REQUIRE(split(buf, w) == 13);
	CHECK_STR(w[12], "Unavailable");
	REQUIRE(msprof_disk(buf, &st, &r, &wr, &pid, &unav, &io) == 'r');
	CHECK(!unav);
	CHECK(io == 50.0);
	REQUIRE(hostfmt_disk_row(buf, sizeof(buf), 0, 7, 0, 0, 0, 10000000, 20000000,
				 "xunavailableunavailable") > 0);
	CHECK(strstr(buf, "unavailable") == NULL);
}

TEST(a_disk_row_comm_with_blanks_stays_one_word)
{
	char buf[HOSTFMT_LINE_MAX], w[MAXW][64];

	REQUIRE(hostfmt_disk_row(buf, sizeof(buf), 0, 7, 0, 0, 0, HOSTFMT_IO_UNKNOWN, 20000000,
				 "pt main\n") > 0);
	CHECK_INT(split(buf, w), 10);
	CHECK_STR(w[9], "pt_main_");
	CHECK(strchr(buf, '\n') == buf + strlen(buf) - 1);
}

TEST(a_disk_row_that_msprof_would_drop_or_misplace_is_refused)
{
	char buf[HOSTFMT_LINE_MAX];

	CHECK_INT(hostfmt_disk_row(buf, sizeof(buf), 0, 7, 0, 1, 1, HOSTFMT_IO_UNKNOWN, 0, "x"), -EINVAL);
	CHECK_INT(hostfmt_disk_row(buf, sizeof(buf), 0, 0, 0, 1, 1, HOSTFMT_IO_UNKNOWN, 20000000, "x"),
		  -EINVAL);
	CHECK_INT(hostfmt_disk_row(buf, sizeof(buf), 0, -3, 0, 1, 1, HOSTFMT_IO_UNKNOWN, 20000000, "x"),
		  -EINVAL);
	CHECK_INT(hostfmt_disk_row(buf, 30, 0, 7, 0, 1, 1, HOSTFMT_IO_UNKNOWN, 20000000, "x"), -ENOSPC);
	/* The largest counters still print whole (no wrap). */
	CHECK(hostfmt_disk_row(buf, sizeof(buf), 0, 7, 0, UINT64_MAX, UINT64_MAX,
			       HOSTFMT_IO_UNKNOWN, 1, "x") > 0);
}

TEST(the_disk_start_is_what_msprof_places_row_0_at)
{
	char buf[64];
	double r, w, io;
	uint64_t st = 0;
	int pid, unav;

	REQUIRE(hostfmt_disk_start(buf, sizeof(buf), 3213309939780ull) > 0);
	CHECK_STR(buf, "start_time 3213309939780\n");
	CHECK(msprof_disk(buf, &st, &r, &w, &pid, &unav, &io) == 's');
	CHECK(st == 3213309939780ull);
}

static const char io_text[] = "rchar: 3980\nwchar: 8388655\nsyscr: 8\nsyscw: 130\n"
			      "read_bytes: 4096\nwrite_bytes: 8392704\ncancelled_write_bytes: 0\n";

TEST(proc_io_gives_read_and_write_bytes)
{
	uint64_t r = 1, w = 1;

	REQUIRE(hostproc_parse_io(io_text, strlen(io_text), &r, &w) == 0);
	CHECK(r == 4096);
	CHECK(w == 8392704);
}

TEST(proc_io_without_a_count_or_with_one_twice_is_refused)
{
	uint64_t r, w;
	const char *bad[] = {
		"read_bytes: 1\n",
		"read_bytes: 1\ncancelled_write_bytes: 2\n",
		"read_bytes: 1\nwrite_bytes: 2\nwrite_bytes: 3\n",
		"read_bytes: 1\nwrite_bytes: 2x\n",
		"read_bytes: 1\nwrite_bytes: \n",
		"read_bytes: 18446744073709551616\nwrite_bytes: 2\n",
		"",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_INT(hostproc_parse_io(bad[i], strlen(bad[i]), &r, &w), -EINVAL);
	CHECK(hostproc_parse_io("write_bytes: 2\nread_bytes: 18446744073709551615", 47, &r, &w) == 0);
	CHECK(r == UINT64_MAX);
}

TEST(proc_net_dev_lines_are_taken_whole_or_not_at_all)
{
	struct hostproc_netdev d;
	const char *lo = "    lo: 2084000       2000    0    0    0     0          0         0  2084000"
			 "       2000    0    0    0     0       0          0";
	const char *bad[] = {
		"Inter-|   Receive                                                |  Transmit",
		" face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs "
		"drop fifo colls carrier compressed",
		"  lo: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15",        /* cut short */
		"  lo: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16x",    /* not a number */
		"  lo: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17y", /* nor a later one */
		"  sixteen_letters_: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16",
		"  : 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16",
		"  lo: 99999999999999999999 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16",
	};

	REQUIRE(hostproc_parse_netdev(lo, strlen(lo), &d) == 0);
	CHECK_STR(d.name, "lo");
	CHECK(d.v[0] == 2084000 && d.v[1] == 2000 && d.v[8] == 2084000 && d.v[15] == 0);
	/* Old kernels printed a long rx count against the colon; a later one may add numbers. */
	REQUIRE(hostproc_parse_netdev("eth0:1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17", 46, &d) == 0);
	CHECK_STR(d.name, "eth0");
	CHECK(d.v[0] == 1 && d.v[15] == 16);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_INT(hostproc_parse_netdev(bad[i], strlen(bad[i]), &d), -EINVAL);
	/* A length, not a NUL, ends the line: the cut of a buffer is refused. */
	CHECK_INT(hostproc_parse_netdev(lo, 40, &d), -EINVAL);
}

UNIT_MAIN()
