// SPDX-License-Identifier: MIT
/* The text of msprof's host data files (see hostfmt.h and docs/HOSTDATA.md). */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostdata/hostfmt.h"

/* snprintf's result as this file's convention: the length, or -ENOSPC. */
static int fitted(int w, size_t len)
{
	return w < 0 || (size_t)w >= len ? -ENOSPC : w;
}

static int comm_char_bad(unsigned char c)
{
	return !isgraph(c) || c == ':' || c == '/' || c == '(' || c == ')';
}

void hostfmt_comm(const char *comm, size_t comm_len, char *out, size_t len)
{
	size_t n = 0;

	if (!len)
		return;
	for (size_t i = 0; i < comm_len && comm[i] && n + 1 < len; i++)
		out[n++] = comm_char_bad((unsigned char)comm[i]) ? '_' : comm[i];
	if (!n && len > 1)
		out[n++] = '?';
	out[n] = '\0';
}

static int one_token(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (comm_char_bad((unsigned char)*s))
			return 0;
	return 1;
}

int hostfmt_syscall_line(char *buf, size_t len, uint64_t start_ns, uint64_t dur_ns, const char *comm,
			 uint32_t tid, const char *name, uint64_t arg0, int64_t ret)
{
	char c[32];

	if (!name || !one_token(name))
		return -EINVAL;
	hostfmt_comm(comm, strlen(comm), c, sizeof(c));
	return fitted(snprintf(buf, len,
			       "%" PRIu64 ".%06" PRIu64 " (%" PRIu64 ".%06" PRIu64
			       " ms): %s/%" PRIu32 " %s(arg0: %" PRIu64 ") = %" PRId64 "\n",
			       start_ns / 1000000, start_ns % 1000000, dur_ns / 1000000,
			       dur_ns % 1000000, c, tid, name, arg0, ret),
		      len);
}

int hostfmt_syscall_anchor(char *buf, size_t len, uint64_t raw_ns, const char *comm, uint32_t tid)
{
	/* 4: CLOCK_MONOTONIC_RAW, the clock start_info was read on. */
	return hostfmt_syscall_line(buf, len, raw_ns, 0, comm, tid, "clock_gettime", 4, 0);
}

int hostfmt_pthread_line(char *buf, size_t len, uint64_t start_ns, uint64_t dur_ns, uint32_t tid,
			 const char *lib, const char *func, uint64_t arg0, int64_t ret)
{
	/* msprof takes the name after the first "->" */
	if (!lib || !func || !one_token(lib) || !one_token(func) || strstr(lib, "->"))
		return -EINVAL;
	return fitted(snprintf(buf, len,
			       "[pid %" PRIu32 "] %" PRIu64 ".%09" PRIu64 " %s->%s(0x%" PRIx64
			       ") = %" PRId64 " <%" PRIu64 ".%09" PRIu64 ">\n",
			       tid, start_ns / 1000000000, start_ns % 1000000000, lib, func, arg0,
			       ret, dur_ns / 1000000000, dur_ns % 1000000000),
		      len);
}

int hostfmt_pthread_anchor(char *buf, size_t len, uint64_t raw_ns, uint32_t tid, const char *lib)
{
	return hostfmt_pthread_line(buf, len, raw_ns, 0, tid, lib, "pthread_once", 0, 0);
}

/* The number of whitespace-separated fields of s. */
static int fields(const char *s)
{
	int n = 0;

	while (*s) {
		while (*s && isspace((unsigned char)*s))
			s++;
		if (!*s)
			break;
		n++;
		while (*s && !isspace((unsigned char)*s))
			s++;
	}
	return n;
}

/* A decimal number with an optional fraction, and where it ends. */
static int number(const char *s, const char **end)
{
	const char *p = s;

	while (isdigit((unsigned char)*p))
		p++;
	if (p == s)
		return 0;
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return 0;
		while (isdigit((unsigned char)*p))
			p++;
	}
	*end = p;
	return 1;
}

/* s is exactly n numbers separated by blanks (a final newline allowed). */
static int numbers(const char *s, int n)
{
	for (int i = 0; i < n; i++) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (!number(s, &s))
			return 0;
	}
	while (isspace((unsigned char)*s))
		s++;
	return *s == '\0';
}

/* The length of s without its final newline. */
static int chomped(const char *s)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r'))
		n--;
	return (int)n;
}

int hostfmt_cpu_head(char *buf, size_t len, uint64_t raw_ns, const char *uptime)
{
	if (!numbers(uptime, 2))
		return -EINVAL;
	return fitted(snprintf(buf, len, "time %" PRIu64 "\n%.*s\n", raw_ns, chomped(uptime), uptime),
		      len);
}

/* msprof reads fields up to [38] (the processor); a line with fewer is not a stat line. */
#define STAT_FIELDS_READ 39

int hostfmt_cpu_thread(char *buf, size_t len, const char *stat)
{
	const char *open = strchr(stat, '('), *close = strrchr(stat, ')');
	int n = chomped(stat);
	size_t w = 0;

	if (!open || !close || close < open || close - stat >= n)
		return -EINVAL;
	if (len < (size_t)n + 2)
		return -ENOSPC;
	for (int i = 0; i < n; i++) {
		unsigned char c = (unsigned char)stat[i];
		int inside = stat + i > open && stat + i < close;

		if (c == '\n' || c == '\r')
			return -EINVAL; /* two lines in one */
		buf[w++] = inside && (!isgraph(c) || c == '(' || c == ')') ? '_' : (char)c;
	}
	buf[w++] = '\n';
	buf[w] = '\0';
	return fields(buf) < STAT_FIELDS_READ ? -EINVAL : (int)w;
}

int hostfmt_mem_line(char *buf, size_t len, uint64_t raw_ns, const char *statm)
{
	if (!numbers(statm, 7))
		return -EINVAL;
	return fitted(snprintf(buf, len, "%" PRIu64 " %.*s\n", raw_ns, chomped(statm), statm), len);
}

int hostfmt_net_head(char *buf, size_t len, uint64_t raw_ns)
{
	return fitted(snprintf(buf, len, "time %" PRIu64 "\n", raw_ns), len);
}

int hostfmt_net_line(char *buf, size_t len, const char *name, const uint64_t v[16])
{
	size_t n = strlen(name);
	int used;

	if (!n || n > 15)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!isgraph((unsigned char)name[i]) || name[i] == ':')
			return -EINVAL;
	used = fitted(snprintf(buf, len, " %6s:", name), len);
	for (int i = 0; i < 16 && used >= 0; i++)
		used = fitted(used + snprintf(buf + used, len - (size_t)used, " %" PRIu64, v[i]), len);
	if (used >= 0)
		used = fitted(used + snprintf(buf + used, len - (size_t)used, "\n"), len);
	return used;
}

/* bytes over dur_ns as bytes per second with 2 decimals, into buf. */
static void rate(char *buf, size_t len, uint64_t bytes, uint64_t dur_ns)
{
	/* In hundredths, rounded: exact for what 64 bits of bytes per period hold. */
	unsigned __int128 c = ((unsigned __int128)bytes * 100000000000ull + dur_ns / 2) / dur_ns;

	if (c / 100 > UINT64_MAX) /* more than 2^64 bytes a second: not a real rate */
		c = (unsigned __int128)UINT64_MAX * 100;
	snprintf(buf, len, "%" PRIu64 ".%02u", (uint64_t)(c / 100), (unsigned)(c % 100));
}

/* iotop's io %: io_ns over dur_ns in hundredths of a percent, at most 99.99. */
static unsigned io_centi(uint64_t io_ns, uint64_t dur_ns)
{
	unsigned __int128 c = ((unsigned __int128)io_ns * 10000 + dur_ns / 2) / dur_ns;

	return c > 9999 ? 9999 : (unsigned)c;
}

/* msprof reads no swapin or io on a line holding "unavailable": the comm's gets a capital U. */
static void not_unavailable(char *comm)
{
	for (char *p = comm; (p = strstr(p, "unavailable")); p++)
		*p = 'U';
}

int hostfmt_disk_row(char *buf, size_t len, unsigned sec_of_day, int pid, unsigned uid,
		     uint64_t read_bytes, uint64_t write_bytes, uint64_t io_ns, uint64_t dur_ns,
		     const char *comm)
{
	char r[48], w[48], c[32], io[32];
	unsigned centi;

	if (!dur_ns || pid <= 0)
		return -EINVAL;
	rate(r, sizeof(r), read_bytes, dur_ns);
	rate(w, sizeof(w), write_bytes, dur_ns);
	hostfmt_comm(comm, strlen(comm), c, sizeof(c));
	not_unavailable(c);
	if (io_ns == HOSTFMT_IO_UNKNOWN) {
		snprintf(io, sizeof(io), "?unavailable?");
	} else {
		centi = io_centi(io_ns, dur_ns);
		snprintf(io, sizeof(io), "0.00 %% %u.%02u %%", centi / 100, centi % 100);
	}
	sec_of_day %= 86400;
	return fitted(snprintf(buf, len, "%02u:%02u:%02u %d ? %u %s B/s %s B/s %s %s\n", sec_of_day / 3600,
			       sec_of_day / 60 % 60, sec_of_day % 60, pid, uid, r, w, io, c),
		      len);
}

uint64_t hostfmt_disk_due(uint64_t start_ns, uint64_t now_ns, uint64_t period)
{
	if (!period || now_ns < start_ns)
		return 0;
	return (now_ns - start_ns) / period + ((now_ns - start_ns) % period >= period / 2);
}

uint64_t hostfmt_disk_share(uint64_t bytes, uint64_t k, uint64_t i)
{
	return k ? bytes / k + (i < bytes % k) : 0;
}

int hostfmt_disk_start(char *buf, size_t len, uint64_t raw_ns)
{
	return fitted(snprintf(buf, len, "start_time %" PRIu64 "\n", raw_ns), len);
}

static int by_total_desc(const void *a, const void *b)
{
	const struct hostfmt_callstat *x = a, *y = b;

	if (x->total_ns != y->total_ns)
		return x->total_ns < y->total_ns ? 1 : -1;
	if (x->calls != y->calls)
		return x->calls < y->calls ? 1 : -1;
	return strcmp(x->name, y->name);
}

void hostfmt_callstat_sort(struct hostfmt_callstat *st, size_t n)
{
	qsort(st, n, sizeof(*st), by_total_desc);
}

int hostfmt_summary_head(char *buf, size_t len)
{
	return fitted(snprintf(buf, len, "%6s %12s %12s %10s %8s %12s  %s\n", "% time", "seconds",
			       "usecs/call", "calls", "errors", "max usecs", "syscall"),
		      len);
}

int hostfmt_summary_line(char *buf, size_t len, const struct hostfmt_callstat *st, uint64_t all_ns)
{
	double share = all_ns ? 100.0 * (double)st->total_ns / (double)all_ns : 0.0;
	uint64_t per = st->calls ? st->total_ns / st->calls / 1000 : 0;

	return fitted(snprintf(buf, len,
			       "%6.2f %5" PRIu64 ".%06" PRIu64 " %12" PRIu64 " %10" PRIu64
			       " %8" PRIu64 " %12" PRIu64 "  %s\n",
			       share, st->total_ns / 1000000000, st->total_ns / 1000 % 1000000, per,
			       st->calls, st->errors, st->max_ns / 1000, st->name),
		      len);
}
