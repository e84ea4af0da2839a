// SPDX-License-Identifier: MIT
/*
 * The host data writers against msprof's grammar (docs/HOSTDATA.md):
 * each line is read back the way msprof's parser reads it, so a line it
 * would drop (or a block line that would lose the whole cpu slice) fails
 * here.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "hostdata/hostfmt.h"
#include "unit.h"

/* "<digits>.<digits>" at the start of s (after blanks), as msprof matches a time. */
static int time_at(const char *s, char *out, size_t len)
{
	const char *p;
	size_t n;

	while (*s == ' ')
		s++;
	p = s;
	while (isdigit((unsigned char)*p))
		p++;
	if (p == s || *p != '.' || !isdigit((unsigned char)p[1]))
		return 0;
	p++;
	while (isdigit((unsigned char)*p))
		p++;
	n = (size_t)(p - s);
	if (n >= len)
		return 0;
	memcpy(out, s, n);
	out[n] = '\0';
	return 1;
}

struct parsed {
	char start[32], dur[32], comm[32], tid[16], name[64];
};

/*
 * A host_syscall line as msprof reads it: the text before the first ':'
 * holds "<start> (<dur>", split at the one blank before '('; between the
 * first and second ':' exactly two blank-separated tokens, "<comm>/<tid>"
 * and "<name>(<arg>". 1 when kept (before the name filter).
 */
static int parse_syscall(const char *line, struct parsed *p)
{
	const char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	char head[128], mid[128], t1[64], t2[64], extra[8];
	const char *paren;

	memset(p, 0, sizeof(*p));
	if (!c1 || (size_t)(c1 - line) >= sizeof(head))
		return 0;
	memcpy(head, line, (size_t)(c1 - line));
	head[c1 - line] = '\0';
	paren = strstr(head, " (");
	if (!paren || strstr(paren + 1, " (") || !time_at(head, p->start, sizeof(p->start)) ||
	    !time_at(paren + 2, p->dur, sizeof(p->dur)))
		return 0;
	if (!c2) /* no second ':': the call had no "arg: value" */
		return 0;
	snprintf(mid, sizeof(mid), "%.*s", (int)(c2 - c1 - 1), c1 + 1);
	if (sscanf(mid, "%63s %63s %7s", t1, t2, extra) != 2 || !strchr(t1, '/'))
		return 0;
	snprintf(p->comm, sizeof(p->comm), "%.*s", (int)(strchr(t1, '/') - t1), t1);
	snprintf(p->tid, sizeof(p->tid), "%s", strchr(t1, '/') + 1);
	snprintf(p->name, sizeof(p->name), "%.*s", (int)strcspn(t2, "("), t2);
	return 1;
}

TEST(syscall_line_parses_as_msprof_reads_it)
{
	char buf[HOSTFMT_LINE_MAX];
	struct parsed p;
	int n = hostfmt_syscall_line(buf, sizeof(buf), 2724849726377ull, 1965, "python", 4321,
				     "read", 5, 1);

	REQUIRE(n > 0);
	CHECK(buf[n - 1] == '\n');
	CHECK_STR(buf, "2724849.726377 (0.001965 ms): python/4321 read(arg0: 5) = 1\n");
	REQUIRE(parse_syscall(buf, &p));
	CHECK_STR(p.start, "2724849.726377");
	CHECK_STR(p.dur, "0.001965");
	CHECK_STR(p.tid, "4321");
	CHECK_STR(p.name, "read");
}

TEST(a_comm_with_a_space_or_colon_stays_one_token)
{
	char buf[HOSTFMT_LINE_MAX];
	struct parsed p;

	REQUIRE(hostfmt_syscall_line(buf, sizeof(buf), 1000000, 0, "pt main: 1/x", 7, "futex", 0, 0) > 0);
	REQUIRE(parse_syscall(buf, &p));
	CHECK_STR(p.comm, "pt_main__1_x");
	CHECK_STR(p.tid, "7");
	CHECK_STR(p.name, "futex");
	REQUIRE(hostfmt_syscall_line(buf, sizeof(buf), 1000000, 0, "", 7, "futex", 0, 0) > 0);
	REQUIRE(parse_syscall(buf, &p));
	CHECK_STR(p.comm, "?");
}

/* perf prints sched_yield() with no argument, and msprof drops it: every line gets one. */
TEST(an_argument_less_call_still_gets_an_argument)
{
	char buf[HOSTFMT_LINE_MAX];
	struct parsed p;

	REQUIRE(hostfmt_syscall_line(buf, sizeof(buf), 5000000, 1000, "a", 1, "sched_yield", 0, 0) > 0);
	CHECK(strstr(buf, "sched_yield(arg0: 0)") != NULL);
	CHECK(parse_syscall(buf, &p));
	/* What perf itself prints, and msprof loses, as the checker sees it. */
	CHECK(!parse_syscall("5.000000 (0.001000 ms): a/1 sched_yield() = 0\n", &p));
}

TEST(a_name_that_is_not_one_token_is_refused)
{
	char buf[HOSTFMT_LINE_MAX];

	CHECK(hostfmt_syscall_line(buf, sizeof(buf), 1, 1, "a", 1, "", 0, 0) == -EINVAL);
	CHECK(hostfmt_syscall_line(buf, sizeof(buf), 1, 1, "a", 1, "re ad", 0, 0) == -EINVAL);
	CHECK(hostfmt_syscall_line(buf, sizeof(buf), 1, 1, "a", 1, "x:y", 0, 0) == -EINVAL);
	CHECK(hostfmt_syscall_line(buf, 10, 1, 1, "a", 1, "read", 0, 0) == -ENOSPC);
}

/*
 * The anchor: stamped at start_info's instant, parsed (so msprof pins the
 * clock to it), under a name none of msprof's kept names is part of (so it
 * is then dropped). The names below are the kept ones a substring could
 * hit; a non-whitelisted name is what makes the anchor vanish.
 */
TEST(the_first_line_anchors_the_clock_and_is_then_dropped)
{
	static const char *const kept_parts[] = { "read",   "write", "open",  "nanosleep",
						  "mmap",   "ioctl", "futex", "poll",
						  "select", "send",  "recv",  "clock_nanosleep",
						  "alarm",  "pause" };
	char buf[HOSTFMT_LINE_MAX];
	struct parsed p;

	REQUIRE(hostfmt_syscall_anchor(buf, sizeof(buf), 2724846901619ull, "python", 99) > 0);
	REQUIRE(parse_syscall(buf, &p));
	CHECK_STR(p.start, "2724846.901619"); /* clockMonotonicRaw 2724846901619 ns, in ms */
	CHECK_STR(p.dur, "0.000000");
	CHECK_STR(p.tid, "99");
	CHECK_STR(p.name, "clock_gettime");
	for (size_t i = 0; i < sizeof(kept_parts) / sizeof(kept_parts[0]); i++)
		CHECK(!strstr(p.name, kept_parts[i]));
}

/* What follows "<pid> (<comm>)" in a 52-field stat line: utime 7, stime 3, processor 9. */
#define STAT_TAIL                                                                          \
	" S 1 2843 16017 0 -1 4194368 1 0 0 0 7 3 0 0 20 0 3 0 272499 86589440 459 "       \
	"18446744073709551615 1 2 3 0 0 0 16386 6 16385 1 0 0 -1 9 0 0 0 0 0 10 11 12 13 " \
	"14 15 16 0\n"

static int field_count(const char *s)
{
	int n = 0;
	char tok[128];

	for (int used; sscanf(s, "%127s%n", tok, &used) == 1; s += used)
		n++;
	return n;
}

/*
 * A host_pthreadcall line read as msprof reads it: split at blanks; at
 * least 5 words; the last "<d.d>" (no fraction: dropped); word 1 the tid
 * with its ']'; word 2 a number; word 3 the name after "->" up to '('.
 * 1 and the fields when kept, 0 when msprof drops the line.
 */
struct pparsed {
	char tid[16], start[32], name[64], dur[32];
};

static int msprof_pthread(const char *line, struct pparsed *p)
{
	char copy[HOSTFMT_LINE_MAX], *w[16], *save, *arrow;
	size_t n = 0, len;

	snprintf(copy, sizeof(copy), "%s", line);
	for (char *t = strtok_r(copy, " \t\n", &save); t && n < 16; t = strtok_r(NULL, " \t\n", &save))
		w[n++] = t;
	if (n < 5)
		return 0;
	len = strlen(w[n - 1]);
	if (w[n - 1][0] != '<' || w[n - 1][len - 1] != '>' || len < 3)
		return 0;
	w[n - 1][len - 1] = '\0';
	if (!time_at(w[n - 1] + 1, p->dur, sizeof(p->dur)))
		return 0;
	snprintf(p->tid, sizeof(p->tid), "%.*s", (int)strcspn(w[1], "]"), w[1]);
	if (!time_at(w[2], p->start, sizeof(p->start)) || strlen(p->start) != strlen(w[2]))
		return 0;
	arrow = strstr(w[3], "->");
	if (!arrow)
		return 0;
	snprintf(p->name, sizeof(p->name), "%.*s", (int)strcspn(arrow + 2, "("), arrow + 2);
	return strcmp(p->name, "pthread_once") != 0; /* msprof skips it (after pinning its clock) */
}

TEST(pthread_line_parses_as_msprof_reads_it)
{
	char line[HOSTFMT_LINE_MAX];
	struct pparsed p;

	CHECK(hostfmt_pthread_line(line, sizeof(line), 494690580208123ull, 45678, 7463, "libc.so.6",
				   "pthread_create", 0x7ffd1234, 0) > 0);
	CHECK_STR(line, "[pid 7463] 494690.580208123 libc.so.6->pthread_create(0x7ffd1234) = 0 <0.000045678>\n");
	REQUIRE(msprof_pthread(line, &p));
	CHECK_STR(p.tid, "7463");
	CHECK_STR(p.start, "494690.580208123");
	CHECK_STR(p.name, "pthread_create");
	CHECK_STR(p.dur, "0.000045678");
}

TEST(a_zero_length_pthread_call_keeps_its_fraction)
{
	char line[HOSTFMT_LINE_MAX];
	struct pparsed p;

	CHECK(hostfmt_pthread_line(line, sizeof(line), 1000000000ull, 0, 1, "libc.so.6",
				   "pthread_mutex_init", 0, -22) > 0);
	REQUIRE(msprof_pthread(line, &p)); /* ltrace's "<0>" would be dropped */
	CHECK_STR(p.dur, "0.000000000");
	CHECK_STR(p.start, "1.000000000");
	CHECK(strstr(line, " = -22 ") != NULL);
}

TEST(a_pthread_lib_or_name_that_would_shift_the_words_is_refused)
{
	char line[HOSTFMT_LINE_MAX];

	CHECK_INT(hostfmt_pthread_line(line, sizeof(line), 1, 1, 1, "lib c.so", "pthread_join", 0, 0),
		  -EINVAL);
	CHECK_INT(hostfmt_pthread_line(line, sizeof(line), 1, 1, 1, "libx->y.so", "pthread_join", 0, 0),
		  -EINVAL);
	CHECK_INT(hostfmt_pthread_line(line, sizeof(line), 1, 1, 1, "libc.so.6", "", 0, 0), -EINVAL);
	CHECK_INT(hostfmt_pthread_line(line, sizeof(line), 1, 1, 1, "", "pthread_join", 0, 0), -EINVAL);
	CHECK_INT(hostfmt_pthread_line(line, 20, 1, 1, 1, "libc.so.6", "pthread_join", 0, 0), -ENOSPC);
}

TEST(the_pthread_anchor_is_parsed_for_the_clock_then_dropped)
{
	char line[HOSTFMT_LINE_MAX];
	struct pparsed p;

	CHECK(hostfmt_pthread_anchor(line, sizeof(line), 494690580208123ull, 7456, "libc.so.6") > 0);
	CHECK_STR(line, "[pid 7456] 494690.580208123 libc.so.6->pthread_once(0x0) = 0 <0.000000000>\n");
	CHECK_INT(msprof_pthread(line, &p), 0);
	/* msprof pins its clock before the name check: the duration and time must parse */
	CHECK_STR(p.dur, "0.000000000");
	CHECK_STR(p.start, "494690.580208123");
}

TEST(a_stat_line_with_a_spaced_comm_keeps_52_fields)
{
	char buf[HOSTFMT_LINE_MAX];
	int n = hostfmt_cpu_thread(buf, sizeof(buf), "4321 (Worker 1 (x)) )" STAT_TAIL);

	REQUIRE(n > 0);
	CHECK(field_count(buf) == 52);
	CHECK(!strncmp(buf, "4321 (Worker_1__x___) S 1 ", 26));
	CHECK(buf[n - 1] == '\n' && buf[n - 2] != '\n');
	/* fields [13] and [14], utime and stime, where msprof takes them */
	{
		char f[52][32];
		const char *s = buf;
		int i = 0;

		for (int used; i < 52 && sscanf(s, "%31s%n", f[i], &used) == 1; s += used)
			i++;
		REQUIRE(i == 52);
		CHECK_STR(f[13], "7");
		CHECK_STR(f[14], "3");
		CHECK_STR(f[38], "9");
	}
}

/* One blank or unparsable line loses the whole cpu slice: none is ever written. */
TEST(a_blank_or_short_line_never_enters_a_cpu_block)
{
	char buf[HOSTFMT_LINE_MAX];

	CHECK(hostfmt_cpu_thread(buf, sizeof(buf), "") == -EINVAL);
	CHECK(hostfmt_cpu_thread(buf, sizeof(buf), "\n") == -EINVAL);
	CHECK(hostfmt_cpu_thread(buf, sizeof(buf), "12 (a) S 1 2 3\n") == -EINVAL);
	CHECK(hostfmt_cpu_thread(buf, sizeof(buf), "12 a S" STAT_TAIL) == -EINVAL);
	CHECK(hostfmt_cpu_thread(buf, sizeof(buf), "12 (a) S 1\n2 (b)" STAT_TAIL) == -EINVAL);
	CHECK(hostfmt_cpu_thread(buf, 20, "12 (a)" STAT_TAIL) == -ENOSPC);
}

TEST(a_cpu_block_head_is_time_then_uptime)
{
	char buf[256];

	REQUIRE(hostfmt_cpu_head(buf, sizeof(buf), 2724849619710ull, "2725.09 1941.88\n") > 0);
	CHECK_STR(buf, "time 2724849619710\n2725.09 1941.88\n");
	CHECK(hostfmt_cpu_head(buf, sizeof(buf), 1, "") == -EINVAL);
	CHECK(hostfmt_cpu_head(buf, sizeof(buf), 1, "2725.09\n") == -EINVAL);
	CHECK(hostfmt_cpu_head(buf, sizeof(buf), 1, "2725.09 x\n") == -EINVAL);
}

TEST(a_mem_line_is_the_stamp_and_seven_statm_numbers)
{
	char buf[256];

	REQUIRE(hostfmt_mem_line(buf, sizeof(buf), 42, "21140 513 453 2 0 4221 0\n") > 0);
	CHECK_STR(buf, "42 21140 513 453 2 0 4221 0\n");
	CHECK(field_count(buf) == 8);
	CHECK(hostfmt_mem_line(buf, sizeof(buf), 42, "21140 513 453 2 0 4221\n") == -EINVAL);
	CHECK(hostfmt_mem_line(buf, sizeof(buf), 42, "21140 513 453 2 0 4221 0 9\n") == -EINVAL);
	CHECK(hostfmt_mem_line(buf, sizeof(buf), 42, "") == -EINVAL);
}

TEST(summary_sorts_by_total_time_and_prints_each_call)
{
	struct hostfmt_callstat st[] = {
		{ "read", 40000, 0, 10000000, 5000 },
		{ "futex", 1, 0, 24000000, 24000000 },
		{ "openat", 2, 1, 300000, 200000 },
	};
	char buf[256];

	hostfmt_callstat_sort(st, 3);
	CHECK_STR(st[0].name, "futex");
	CHECK_STR(st[1].name, "read");
	CHECK_STR(st[2].name, "openat");
	REQUIRE(hostfmt_summary_line(buf, sizeof(buf), &st[1], 34300000) > 0);
	CHECK_STR(buf, " 29.15     0.010000            0      40000        0            5  read\n");
	REQUIRE(hostfmt_summary_head(buf, sizeof(buf)) > 0);
	CHECK(strstr(buf, "calls") && strstr(buf, "max usecs"));
}

UNIT_MAIN()
