// SPDX-License-Identifier: MIT
/* Window rules and script commands (see rule.h). */
#include <ctype.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "config/rule.h"
#include "common/errbuf.h"
#include "shared/decimal.h"
#include "shared/array_size.h"

#define COND_FORMS                                                                               \
	"open, exec:GLOB, call:LIB:SYMBOL#N, +DURATION, at:TIME, signal:NAME, file:PATH, exit, " \
	"slow:LIB:SYMBOL>LIMIT, gap:LIB:SYMBOL>LIMIT, stall:LIB:SYMBOL>DURATION"
#define CALL_FORM "(call:LIB:SYMBOL#N)"
#define LIMIT_FORM \
	"(a duration such as 200ms, 500us or 2s, or a multiple of the typical value such as 3x or 1.5x)"
#define DURATION_FORM "(N followed by ms, s, m or h, such as 500ms or 30s; at least 1 ms)"
#define TIME_FORM "(YYYY-MM-DDTHH:MM:SS[.fff] then Z, +HH:MM or -HH:MM; or @EPOCH)"
#define RULE_FORM "(start=COND[,stop=COND][,repeat=N][,every=DURATION])"
#define SCRIPT_FORM \
	"(start [SEL] [--json], stop [SEL] [--json], quit [SEL] [--json], status [--json], sleep DURATION, wait CONDITION, events, window RULE)"
#define SEL_FORM "(" SEL_FORMS ")"
#define OTHER_SIGNAL "choose another signal, such as USR1"

/* ---- numbers ------------------------------------------------------------------ */

static bool is_digit(char ch)
{
	return ch >= '0' && ch <= '9'; /* not isdigit(): no locale may widen the set */
}

/* The decimal digits that begin s; *end after them. -1 when none or on overflow. */
static int parse_digits(const char *s, uint64_t *v, const char **end)
{
	size_t n;

	if (decimal_prefix(s, SIZE_MAX, UINT64_MAX, v, &n))
		return -1;
	*end = s + n;
	return 0;
}

/* A whole string of digits (no sign, no blanks, no junk). */
static int parse_whole_number(const char *s, uint64_t *v)
{
	return decimal_u64(s, 0, UINT64_MAX, v) ? -1 : 0;
}

int duration_parse_ms(const char *text, int64_t *ms)
{
	static const struct {
		const char *suffix;
		int64_t ms;
	} units[] = { { "ms", 1 }, { "s", 1000 }, { "m", 60 * 1000 }, { "h", 3600 * 1000 }, { "", 1000 } };
	const char *end;
	uint64_t n;

	if (!text || parse_digits(text, &n, &end))
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
		if (strcmp(end, units[i].suffix))
			continue;
		if (n == 0 || n > (uint64_t)(INT64_MAX / units[i].ms))
			return -1;
		*ms = (int64_t)n * units[i].ms;
		return 0;
	}
	return -1;
}

/* ---- wall-clock times ------------------------------------------------------------ */

enum time_verdict { TIME_OK = 0, TIME_BAD, TIME_NO_ZONE };

struct civil {
	int year, month, day, hour, min, sec, ms;
};

/* Exactly `width` digits at *p, advancing past them. */
static int fixed_digits(const char **p, int width, int *v)
{
	int n = 0;

	for (int i = 0; i < width; i++) {
		if (!is_digit((*p)[i]))
			return -1;
		n = n * 10 + ((*p)[i] - '0');
	}
	*p += width;
	*v = n;
	return 0;
}

static int expect(const char **p, char ch)
{
	if (**p != ch)
		return -1;
	(*p)++;
	return 0;
}

/* ".d[d...]" (1 to 9 digits) at *p, if any, as milliseconds (finer digits dropped). */
static int parse_fraction(const char **p, int *ms)
{
	int n = 0, digits = 0;

	*ms = 0;
	if (**p != '.')
		return 0;
	for ((*p)++; is_digit(**p); (*p)++, digits++)
		if (digits < 3)
			n = n * 10 + (**p - '0');
	if (digits < 1 || digits > 9)
		return -1;
	for (; digits < 3; digits++)
		n *= 10;
	*ms = n;
	return 0;
}

static bool leap_year(int64_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int month_days(int y, int m)
{
	static const int days[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };

	return days[m - 1] + (m == 2 && leap_year(y));
}

/* Rounds towards minus infinity, so the leap-year count below holds for year 0 too. */
static int64_t floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;

	return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* Leap years in [1, y), by the Gregorian rule extended backwards. */
static int64_t leaps_before(int64_t y)
{
	return floor_div(y - 1, 4) - floor_div(y - 1, 100) + floor_div(y - 1, 400);
}

/* Days from 1970-01-01 to y-m-d: ours rather than timegm(), which is not standard and TZ-free only by convention. */
static int64_t days_from_civil(int y, int m, int d)
{
	static const int before[12] = { 0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334 };
	int64_t days = 365 * (int64_t)(y - 1970) + leaps_before(y) - leaps_before(1970);

	return days + before[m - 1] + (m > 2 && leap_year(y)) + d - 1;
}

/* "YYYY-MM-DD" then 'T' or one space. */
static int parse_date(const char **p, struct civil *t)
{
	if (fixed_digits(p, 4, &t->year) || expect(p, '-') || fixed_digits(p, 2, &t->month) ||
	    expect(p, '-') || fixed_digits(p, 2, &t->day))
		return -1;
	if (t->month < 1 || t->month > 12 || t->day < 1 || t->day > month_days(t->year, t->month))
		return -1;
	return expect(p, 'T') && expect(p, ' ') ? -1 : 0;
}

/* "HH:MM:SS[.fff]"; second 60 is a leap second and counts as the next minute's 0. */
static int parse_clock(const char **p, struct civil *t)
{
	if (fixed_digits(p, 2, &t->hour) || expect(p, ':') || fixed_digits(p, 2, &t->min) ||
	    expect(p, ':') || fixed_digits(p, 2, &t->sec) || parse_fraction(p, &t->ms))
		return -1;
	return t->hour < 24 && t->min < 60 && t->sec <= 60 ? 0 : -1;
}

/* "Z", "+HH:MM", "-HH:MM", "+HHMM" or "-HHMM" and nothing after: minutes east of UTC. */
static enum time_verdict parse_zone(const char *p, int *east_min)
{
	int sign, hh, mm;

	if (!*p)
		return TIME_NO_ZONE;
	if (!strcmp(p, "Z")) {
		*east_min = 0;
		return TIME_OK;
	}
	if (*p != '+' && *p != '-')
		return TIME_BAD;
	sign = *p++ == '-' ? -1 : 1;
	if (fixed_digits(&p, 2, &hh))
		return TIME_BAD;
	if (*p == ':')
		p++;
	if (fixed_digits(&p, 2, &mm) || *p || hh > 23 || mm > 59)
		return TIME_BAD;
	*east_min = sign * (hh * 60 + mm);
	return TIME_OK;
}

static enum time_verdict parse_iso(const char *s, int64_t *epoch_ms)
{
	struct civil t;
	enum time_verdict v;
	int east_min = 0;
	int64_t secs;

	if (parse_date(&s, &t) || parse_clock(&s, &t))
		return TIME_BAD;
	v = parse_zone(s, &east_min);
	if (v != TIME_OK)
		return v;
	secs = days_from_civil(t.year, t.month, t.day) * 86400 + t.hour * 3600 + t.min * 60 + t.sec;
	*epoch_ms = (secs - (int64_t)east_min * 60) * 1000 + t.ms;
	return TIME_OK;
}

/* "@SECONDS[.fff]" since the epoch. */
static enum time_verdict parse_epoch(const char *s, int64_t *epoch_ms)
{
	const char *p;
	uint64_t secs;
	int ms;

	if (parse_digits(s + 1, &secs, &p) || parse_fraction(&p, &ms) || *p)
		return TIME_BAD;
	if (secs > (uint64_t)(INT64_MAX - 999) / 1000)
		return TIME_BAD;
	*epoch_ms = (int64_t)secs * 1000 + ms;
	return TIME_OK;
}

static enum time_verdict time_parse(const char *text, int64_t *epoch_ms)
{
	if (!text)
		return TIME_BAD;
	return text[0] == '@' ? parse_epoch(text, epoch_ms) : parse_iso(text, epoch_ms);
}

int time_parse_epoch_ms(const char *text, int64_t *epoch_ms)
{
	return time_parse(text, epoch_ms) == TIME_OK ? 0 : -1;
}

/* ISO-8601 UTC to the second, for messages; gmtime_r() does not read TZ. */
static void time_text(int64_t epoch_ms, char *buf, size_t len)
{
	time_t secs = (time_t)floor_div(epoch_ms, 1000);
	struct tm tm;

	if (!gmtime_r(&secs, &tm) || !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, len, "@%lld", (long long)secs);
}

/* ---- signals --------------------------------------------------------------------- */

/* RTMIN, RTMIN+N, RTMAX, RTMAX-N (without "SIG"): 0, -1 if malformed, 1 if not one of these. */
static int rt_signal(const char *name, int *signo)
{
	bool from_min = !strncasecmp(name, "RTMIN", 5);
	const char *rest = name + 5;
	uint64_t n;

	if (!from_min && strncasecmp(name, "RTMAX", 5))
		return 1;
	if (!*rest) {
		*signo = from_min ? SIGRTMIN : SIGRTMAX;
		return 0;
	}
	if (*rest != (from_min ? '+' : '-') || parse_whole_number(rest + 1, &n) ||
	    n > (uint64_t)(SIGRTMAX - SIGRTMIN))
		return -1;
	*signo = from_min ? SIGRTMIN + (int)n : SIGRTMAX - (int)n;
	return 0;
}

int signal_parse(const char *text, int *signo)
{
	const char *name = text;
	int rt;

	if (!text)
		return -1;
	if (!strncasecmp(name, "SIG", 3))
		name += 3; /* no signal's own name begins with SIG, so this is unambiguous */
	if (!*name)
		return -1;
	rt = rt_signal(name, signo);
	if (rt <= 0)
		return rt;
	for (int i = 1; i < NSIG; i++) {
		const char *abbrev = sigabbrev_np(i);

		if (abbrev && !strcasecmp(abbrev, name)) {
			*signo = i;
			return 0;
		}
	}
	return -1;
}

/* Why a signal cannot be a condition, or NULL. */
static const char *signal_refusal(int signo)
{
	switch (signo) {
	case SIGKILL:
	case SIGSTOP:
		return "cannot be caught";
	case SIGINT:
	case SIGTERM:
	case SIGHUP:
		return "makes dynprof quit (as SIGINT, SIGTERM and SIGHUP all do)";
	case SIGCHLD:
	case SIGPIPE:
		return "is used by dynprof internally";
	default:
		return NULL;
	}
}

/* ---- conditions -------------------------------------------------------------------- */

struct cond_ctx {
	const char *text; /* the whole condition, quoted in messages */
	bool for_stop;
	int64_t now;
	char *err;
	size_t errlen;
};

static int store(struct cond_ctx *x, char **field, const char *s, size_t len)
{
	*field = strndup(s, len);
	return *field ? 0 : errbuf_set(x->err, x->errlen, "%s: out of memory", x->text);
}

static int parse_exec(struct cond_ctx *x, struct condition *c, const char *arg)
{
	if (!*arg)
		return errbuf_set(x->err, x->errlen, "%s: the glob is empty (exec:GLOB)", x->text);
	return store(x, &c->glob, arg, strlen(arg));
}

static int parse_file(struct cond_ctx *x, struct condition *c, const char *arg)
{
	if (!*arg)
		return errbuf_set(x->err, x->errlen, "%s: the path is empty (file:PATH)", x->text);
	return store(x, &c->path, arg, strlen(arg));
}

/*
 * LIB ends at the first ':' (a library path has none in practice) and
 * SYMBOL at the last '#', so C++ names such as ns::f keep their colons.
 */
static int parse_call(struct cond_ctx *x, struct condition *c, const char *arg)
{
	const char *colon = strchr(arg, ':'), *sym, *hash;

	if (!colon)
		return errbuf_set(x->err, x->errlen,
				  "%s: no ':' between library and symbol " CALL_FORM, x->text);
	if (colon == arg)
		return errbuf_set(x->err, x->errlen, "%s: the library is empty " CALL_FORM, x->text);
	sym = colon + 1;
	hash = strrchr(sym, '#');
	if (!hash)
		return errbuf_set(x->err, x->errlen, "%s: the call number is missing " CALL_FORM,
				  x->text);
	if (hash == sym)
		return errbuf_set(x->err, x->errlen, "%s: the symbol is empty " CALL_FORM, x->text);
	if (parse_whole_number(hash + 1, &c->count) || c->count == 0)
		return errbuf_set(x->err, x->errlen,
				  "%s: the call number '%s' is not a positive integer " CALL_FORM,
				  x->text, hash + 1);
	if (store(x, &c->lib, arg, (size_t)(colon - arg)))
		return -1;
	return store(x, &c->symbol, sym, (size_t)(hash - sym));
}

/* ---- slow:, gap:, stall: --------------------------------------------------------------- */

/* "N" or "N.F" (F: 1 to 3 digits) at *p, in thousandths. -1 when none or too large. */
static int parse_milli(const char **p, uint64_t *milli)
{
	uint64_t n;
	int frac = 0, digits = 0;

	if (parse_digits(*p, &n, p) || n > UINT32_MAX / 1000)
		return -1;
	if (**p == '.') {
		for ((*p)++; is_digit(**p) && digits < 3; (*p)++, digits++)
			frac = frac * 10 + (**p - '0');
		if (!digits || is_digit(**p))
			return -1;
		for (; digits < 3; digits++)
			frac *= 10;
	}
	*milli = n * 1000 + (uint64_t)frac;
	return 0;
}

/* A whole number then us, ms, s, m or h, in ns; 0 for a zero. -1 when malformed or too large. */
static int parse_limit_ns(const char *text, uint64_t *ns)
{
	static const struct {
		const char *suffix;
		uint64_t ns;
	} units[] = { { "us", 1000ULL },
		      { "ms", 1000000ULL },
		      { "s", 1000000000ULL },
		      { "m", 60000000000ULL },
		      { "h", 3600000000000ULL } };
	const char *end;
	uint64_t n;

	if (parse_digits(text, &n, &end))
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(units); i++)
		if (!strcmp(end, units[i].suffix)) {
			if (n > UINT64_MAX / 2 / units[i].ns) /* room for a kernel sum */
				return -1;
			*ns = n * units[i].ns;
			return 0;
		}
	return -1;
}

int duration_parse_ns(const char *text, uint64_t *ns)
{
	return parse_limit_ns(text, ns) ? -EINVAL : 0;
}

/* LIMIT of slow: and gap:, a duration or a multiple of the typical value. */
static int parse_limit(struct cond_ctx *x, struct condition *c, const char *arg)
{
	const char *p = arg;
	uint64_t milli;

	if (arg[0] && arg[strlen(arg) - 1] == 'x') {
		if (parse_milli(&p, &milli) || strcmp(p, "x"))
			return errbuf_set(x->err, x->errlen, "%s: '%s' is not a limit " LIMIT_FORM,
					  x->text, arg);
		if (milli <= COND_MULT_ONE)
			return errbuf_set(x->err, x->errlen,
					  "%s: the multiple '%s' must be more than 1x (no call is longer than the typical one by %s)",
					  x->text, arg, arg);
		if (milli > COND_MULT_MAX * COND_MULT_ONE)
			return errbuf_set(x->err, x->errlen, "%s: the multiple '%s' is more than %dx",
					  x->text, arg, COND_MULT_MAX);
		c->mult_milli = (uint32_t)milli;
		return 0;
	}
	if (parse_limit_ns(arg, &c->limit_ns))
		return errbuf_set(x->err, x->errlen, "%s: '%s' is not a limit " LIMIT_FORM, x->text, arg);
	if (c->limit_ns == 0)
		return errbuf_set(x->err, x->errlen,
				  "%s: the limit '%s' must be positive " LIMIT_FORM, x->text, arg);
	return 0;
}

/* stall:'s DURATION: no multiple (nothing is typical about a call that does not come). */
static int parse_stall_limit(struct cond_ctx *x, struct condition *c, const char *arg)
{
	if (arg[0] && arg[strlen(arg) - 1] == 'x')
		return errbuf_set(x->err, x->errlen,
				  "%s: stall: takes a duration, not a multiple such as '%s' " DURATION_FORM,
				  x->text, arg);
	if (duration_parse_ms(arg, &c->ms)) {
		uint64_t ns;

		if (!parse_limit_ns(arg, &ns) && ns == 0)
			return errbuf_set(x->err, x->errlen,
					  "%s: the duration '%s' must be positive " DURATION_FORM,
					  x->text, arg);
		return errbuf_set(x->err, x->errlen, "%s: '%s' is not a duration " DURATION_FORM,
				  x->text, arg);
	}
	if (c->ms > (int64_t)(UINT64_MAX / 2 / 1000000))
		return errbuf_set(x->err, x->errlen, "%s: the duration '%s' is too long", x->text, arg);
	c->limit_ns = (uint64_t)c->ms * 1000000ULL;
	return 0;
}

/*
 * LIB:SYMBOL>LIMIT: LIB ends at the first ':' as in call:, SYMBOL at the
 * last '>' (C++ names keep their colons; operator> is no step function).
 */
static int parse_timed(struct cond_ctx *x, struct condition *c, const char *arg)
{
	const char *colon = strchr(arg, ':'), *sym, *gt;
	const char *form = c->kind == COND_STALL ? "stall:LIB:SYMBOL>DURATION" :
			   c->kind == COND_SLOW  ? "slow:LIB:SYMBOL>LIMIT" :
						   "gap:LIB:SYMBOL>LIMIT";

	if (!colon)
		return errbuf_set(x->err, x->errlen, "%s: no ':' between library and symbol (%s)",
				  x->text, form);
	if (colon == arg)
		return errbuf_set(x->err, x->errlen, "%s: the library is empty (%s)", x->text, form);
	sym = colon + 1;
	gt = strrchr(sym, '>');
	if (!gt)
		return errbuf_set(x->err, x->errlen,
				  "%s: the limit is missing (%s; quote the rule in a shell, which takes '>' for a redirection)",
				  x->text, form);
	if (gt == sym)
		return errbuf_set(x->err, x->errlen, "%s: the symbol is empty (%s)", x->text, form);
	if (c->kind == COND_STALL ? parse_stall_limit(x, c, gt + 1) : parse_limit(x, c, gt + 1))
		return -1;
	if (store(x, &c->lib, arg, (size_t)(colon - arg)))
		return -1;
	return store(x, &c->symbol, sym, (size_t)(gt - sym));
}

static int parse_after(struct cond_ctx *x, struct condition *c, const char *arg)
{
	if (duration_parse_ms(arg, &c->ms))
		return errbuf_set(x->err, x->errlen, "%s: '%s' is not a duration " DURATION_FORM,
				  x->text, arg);
	return 0;
}

static int parse_at(struct cond_ctx *x, struct condition *c, const char *arg)
{
	char now[64];

	switch (time_parse(arg, &c->ms)) {
	case TIME_NO_ZONE:
		return errbuf_set(x->err, x->errlen,
				  "%s: the time has no zone; add Z (UTC) or an offset such as +08:00, as nodes' zones may differ",
				  x->text);
	case TIME_BAD:
		return errbuf_set(x->err, x->errlen, "%s: '%s' is not a time " TIME_FORM, x->text, arg);
	case TIME_OK:
		break;
	}
	if (c->ms > x->now)
		return 0;
	time_text(x->now, now, sizeof(now));
	return errbuf_set(x->err, x->errlen, "%s is in the past (now %s)", x->text, now);
}

static int parse_signal(struct cond_ctx *x, struct condition *c, const char *arg)
{
	const char *why;

	if (signal_parse(arg, &c->signo))
		return errbuf_set(x->err, x->errlen,
				  "%s: '%s' is not a signal name (such as USR1, SIGUSR2 or RTMIN+1)",
				  x->text, arg);
	why = signal_refusal(c->signo);
	if (why)
		return errbuf_set(x->err, x->errlen, "%s: SIG%s %s; " OTHER_SIGNAL, x->text,
				  sigabbrev_np(c->signo), why);
	return 0;
}

static const struct cond_form {
	const char *prefix; /* the whole word when `exact` */
	bool exact;
	enum cond_kind kind;
	int (*parse)(struct cond_ctx *x, struct condition *c, const char *arg);
} cond_forms[] = {
	{ "open", true, COND_OPEN, NULL },
	{ "exit", true, COND_EXIT, NULL },
	{ "exec:", false, COND_EXEC, parse_exec },
	{ "call:", false, COND_CALL, parse_call },
	{ "+", false, COND_AFTER, parse_after },
	{ "at:", false, COND_AT, parse_at },
	{ "signal:", false, COND_SIGNAL, parse_signal },
	{ "file:", false, COND_FILE, parse_file },
	{ "slow:", false, COND_SLOW, parse_timed },
	{ "gap:", false, COND_GAP, parse_timed },
	{ "stall:", false, COND_STALL, parse_timed },
};

static const struct cond_form *cond_form_of(const char *text)
{
	for (size_t i = 0; i < ARRAY_SIZE(cond_forms); i++) {
		const struct cond_form *f = &cond_forms[i];

		if (f->exact ? !strcmp(text, f->prefix) : !strncmp(text, f->prefix, strlen(f->prefix)))
			return f;
	}
	return NULL;
}

/* open and exec describe how a target begins, exit how it ends: each fits one side only. */
static int check_side(const struct cond_ctx *x, const struct cond_form *f)
{
	const char *key = x->for_stop ? "stop" : "start";

	if (x->for_stop && f->kind == COND_OPEN)
		return errbuf_set(x->err, x->errlen,
				  "%s=%s: 'open' is a start condition (the target's first card open)",
				  key, x->text);
	if (x->for_stop && f->kind == COND_EXEC)
		return errbuf_set(x->err, x->errlen,
				  "%s=%s: 'exec:' is a start condition (the target runs a binary)",
				  key, x->text);
	if (!x->for_stop && f->kind == COND_EXIT)
		return errbuf_set(x->err, x->errlen,
				  "%s=%s: 'exit' is a stop condition (the target exits)", key, x->text);
	return 0;
}

int condition_parse(const char *text, bool for_stop, int64_t now_epoch_ms, struct condition *c,
		    char *err, size_t errlen)
{
	struct cond_ctx x = { text, for_stop, now_epoch_ms, err, errlen };
	const struct cond_form *f;

	memset(c, 0, sizeof(*c));
	if (!text || !*text)
		return errbuf_set(err, errlen, "an empty condition (" COND_FORMS ")");
	f = cond_form_of(text);
	if (!f)
		return errbuf_set(err, errlen, "'%s': unknown condition (" COND_FORMS ")", text);
	if (check_side(&x, f))
		return -1;
	snprintf(c->text, sizeof(c->text), "%s", text); /* messages only: a long path may be cut */
	c->kind = f->kind;                              /* before parse: parse_timed reads it */
	if (f->parse && f->parse(&x, c, text + strlen(f->prefix))) {
		condition_free(c);
		return -1;
	}
	return 0;
}

void condition_free(struct condition *c)
{
	if (!c)
		return;
	free(c->glob);
	free(c->path);
	free(c->lib);
	free(c->symbol);
	c->glob = c->path = c->lib = c->symbol = NULL;
}

/* ---- window rules ---------------------------------------------------------------------- */

enum rule_key { KEY_START, KEY_STOP, KEY_REPEAT, KEY_EVERY, KEY_COUNT };

static const char *const rule_keys[KEY_COUNT] = { "start=", "stop=", "repeat=", "every=" };

struct rule_state {
	struct window_rule *r;
	int64_t now;
	unsigned seen;      /* 1 << key for every key given */
	int repeat;         /* repeat=, when given */
	char every_arg[32]; /* every='s value, for messages (a valid one is short) */
	char *err;
	size_t errlen;
};

static int key_at(const char *s)
{
	for (int k = 0; k < KEY_COUNT; k++)
		if (!strncmp(s, rule_keys[k], strlen(rule_keys[k])))
			return k;
	return -1;
}

/*
 * Items end at a ',' only where a key follows, so paths and globs may hold
 * commas ("start=file:/tmp/a,b"); the price is that a value cannot contain
 * ",stop=" and the like.
 */
static const char *item_end(const char *value)
{
	for (const char *p = strchr(value, ','); p; p = strchr(p + 1, ','))
		if (key_at(p + 1) >= 0)
			return p;
	return value + strlen(value);
}

/* An item that does not begin with a key: name what was given instead. */
static int bad_item(struct rule_state *st, const char *item)
{
	size_t len = strcspn(item, ",");
	const char *eq = memchr(item, '=', len);

	if (!len)
		return errbuf_set(st->err, st->errlen, "'%s': an empty item " RULE_FORM, st->r->text);
	if (eq)
		return errbuf_set(st->err, st->errlen,
				  "'%.*s': unknown key (start=, stop=, repeat=, every=)",
				  (int)(eq - item), item);
	return errbuf_set(st->err, st->errlen, "'%.*s': not key=value " RULE_FORM, (int)len, item);
}

/* Only globs, paths and symbols may hold commas; elsewhere a comma begins a stray item. */
static int check_commas(struct rule_state *st, enum rule_key key, const char *value)
{
	const char *comma = strchr(value, ',');
	bool free_text = (key == KEY_START || key == KEY_STOP) &&
			 (!strncmp(value, "exec:", 5) || !strncmp(value, "file:", 5) ||
			  !strncmp(value, "call:", 5) || !strncmp(value, "slow:", 5) ||
			  !strncmp(value, "gap:", 4) || !strncmp(value, "stall:", 6));

	return comma && !free_text ? bad_item(st, comma + 1) : 0;
}

static int parse_repeat(struct rule_state *st, const char *value)
{
	uint64_t n;

	if (parse_whole_number(value, &n) || n < 1 || n > RULE_MAX_REPEAT)
		return errbuf_set(st->err, st->errlen,
				  "repeat=%s: the number of windows must be from 1 to %d", value,
				  RULE_MAX_REPEAT);
	st->repeat = (int)n;
	return 0;
}

static int parse_every(struct rule_state *st, const char *value)
{
	if (duration_parse_ms(value, &st->r->every_ms))
		return errbuf_set(st->err, st->errlen,
				  "every=%s: '%s' is not a duration " DURATION_FORM, value, value);
	snprintf(st->every_arg, sizeof(st->every_arg), "%s", value);
	return 0;
}

static int apply_item(struct rule_state *st, enum rule_key key, const char *value)
{
	if (st->seen & (1u << key))
		return errbuf_set(st->err, st->errlen, "'%s' given twice", rule_keys[key]);
	st->seen |= 1u << key;
	if (check_commas(st, key, value))
		return -1;
	switch (key) {
	case KEY_START:
		return condition_parse(value, false, st->now, &st->r->start, st->err, st->errlen);
	case KEY_STOP:
		return condition_parse(value, true, st->now, &st->r->stop, st->err, st->errlen);
	case KEY_REPEAT:
		return parse_repeat(st, value);
	default:
		return parse_every(st, value);
	}
}

/* Split the rule into items and apply each. */
static int parse_items(struct rule_state *st, const char *text)
{
	for (const char *p = text;;) {
		int key = key_at(p);
		const char *value, *end;
		char *copy;
		int rc;

		if (key < 0)
			return bad_item(st, p);
		value = p + strlen(rule_keys[key]);
		end = item_end(value);
		copy = strndup(value, (size_t)(end - value));
		if (!copy)
			return errbuf_set(st->err, st->errlen, "out of memory");
		rc = apply_item(st, (enum rule_key)key, copy);
		free(copy);
		if (rc || !*end)
			return rc;
		p = end + 1;
	}
}

static bool fires_once(enum cond_kind kind)
{
	return kind == COND_OPEN || kind == COND_EXEC || kind == COND_AT;
}

/* Refuse rules that parse but can never do what they say. */
static int check_rule(struct rule_state *st)
{
	struct window_rule *r = st->r;
	bool every = st->seen & (1u << KEY_EVERY);
	const char *why =
		r->stop.kind == COND_NONE ?
			"needs stop=: a window without stop= ends only when the target exits" :
			"needs a stop= other than exit: such a window ends only when the target exits";

	if (!(st->seen & (1u << KEY_START)))
		return errbuf_set(st->err, st->errlen, "'%s': no start= " RULE_FORM, r->text);
	r->repeat = st->seen & (1u << KEY_REPEAT) ? st->repeat : every ? 0 : 1;
	if (r->stop.kind == COND_NONE || r->stop.kind == COND_EXIT) {
		if (every)
			return errbuf_set(st->err, st->errlen, "every=%s %s", st->every_arg, why);
		if (r->repeat > 1)
			return errbuf_set(st->err, st->errlen, "repeat=%d %s", r->repeat, why);
	}
	if (r->repeat > 1 && !every && fires_once(r->start.kind))
		return errbuf_set(st->err, st->errlen,
				  "start=%s fires once per target: add every=DURATION to repeat it",
				  r->start.text);
	return 0;
}

int rule_parse(const char *text, int64_t now_epoch_ms, struct window_rule *r, char *err, size_t errlen)
{
	struct rule_state st = { .r = r, .now = now_epoch_ms, .err = err, .errlen = errlen };

	memset(r, 0, sizeof(*r));
	if (!text || !*text)
		return errbuf_set(err, errlen, "the rule is empty " RULE_FORM);
	snprintf(r->text, sizeof(r->text), "%s", text); /* messages only: may be cut */
	if (parse_items(&st, text) || check_rule(&st)) {
		rule_free(r);
		return -1;
	}
	return 0;
}

void rule_free(struct window_rule *r)
{
	if (!r)
		return;
	condition_free(&r->start);
	condition_free(&r->stop);
}

/* ---- script commands ---------------------------------------------------------------------- */

static bool is_blank(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r'; /* '\r': scripts written on Windows */
}

/* ---- selectors ---- */

static bool printable_word(const char *s)
{
	for (; *s; s++)
		if (*s <= ' ' || *s > '~')
			return false;
	return true;
}

static int parse_sel_pid(const char *v, struct selector *sel, char *err, size_t errlen)
{
	uint64_t n;

	if (decimal_span(v, strlen(v), 1, 999999999, &n))
		return errbuf_set(err, errlen, "'pid=%s': '%s' is not a pid (pid=N, N from 1)", v, v);
	sel->pid = (int)n;
	return 0;
}

static int parse_sel_user(const char *v, struct selector *sel, char *err, size_t errlen)
{
	uint64_t n;

	if (is_digit(*v)) {
		if (decimal_span(v, strlen(v), 0, 4294967294u, &n))
			return errbuf_set(err, errlen,
					  "'user=%s': '%s' is not a uid (0 to 4294967294)", v, v);
		sel->uid = (int64_t)n;
		return 0;
	}
	/* A user name: what useradd accepts, and no more (it is matched through passwd). */
	for (const char *c = v; *c; c++)
		if (!isalnum((unsigned char)*c) && !strchr("_.-$", *c))
			return errbuf_set(err, errlen, "'user=%s': '%s' is not a user name or uid", v, v);
	sel->uid = -1;
	return 0;
}

int selector_parse(const char *text, struct selector *sel, char *err, size_t errlen)
{
	const char *eq = strchr(text, '=');
	const char *v = eq ? eq + 1 : "";
	size_t klen = eq ? (size_t)(eq - text) : strlen(text);

	memset(sel, 0, sizeof(*sel));
	if (!strcmp(text, "all"))
		return 0;
	if (!eq || !((klen == 3 && !strncmp(text, "pid", 3)) ||
		     (klen == 9 && !strncmp(text, "container", 9)) ||
		     (klen == 4 && !strncmp(text, "user", 4))))
		return errbuf_set(err, errlen, "'%.64s': unknown selector " SEL_FORM, text);
	if (!*v)
		return errbuf_set(err, errlen, "'%.64s': no value after '=' " SEL_FORM, text);
	if (strlen(v) >= sizeof(sel->value) || !printable_word(v))
		return errbuf_set(err, errlen,
				  "'%.32s...': the value must be printable ASCII, at most %zu characters",
				  text, sizeof(sel->value) - 1);
	snprintf(sel->value, sizeof(sel->value), "%s", v);
	snprintf(sel->text, sizeof(sel->text), "%s", text);
	if (klen == 3) {
		sel->kind = SEL_PID;
		return parse_sel_pid(v, sel, err, errlen);
	}
	if (klen == 4) {
		sel->kind = SEL_USER;
		return parse_sel_user(v, sel, err, errlen);
	}
	sel->kind = SEL_CONTAINER;
	return 0;
}

/* ---- script commands ---- */

const char *script_op_name(enum script_op op)
{
	static const char *const names[] = {
		[SCRIPT_NOP] = "",          [SCRIPT_START] = "start",   [SCRIPT_STOP] = "stop",
		[SCRIPT_QUIT] = "quit",     [SCRIPT_SLEEP] = "sleep",   [SCRIPT_WAIT] = "wait",
		[SCRIPT_STATUS] = "status", [SCRIPT_EVENTS] = "events", [SCRIPT_WINDOW] = "window",
	};

	return (unsigned)op < ARRAY_SIZE(names) && names[op] ? names[op] : "?";
}

/* start, stop, quit (q): at most one selector, and --json (a client's answers as JSON). */
static int parse_targeted(const char *line, const char *word, const char *arg, enum script_op op,
			  struct script_cmd *cmd, char *err, size_t errlen)
{
	char words[2][256], sub[256];
	int n = 0;

	for (const char *p = arg; *p;) {
		size_t len = strcspn(p, " \t\r");

		if (n == 2 || len >= sizeof(words[0]))
			return errbuf_set(err, errlen,
					  "'%s': %s takes at most one selector " SEL_FORM " and --json",
					  line, word);
		snprintf(words[n++], sizeof(words[0]), "%.*s", (int)len, p);
		p += len;
		p += strspn(p, " \t\r");
	}
	for (int i = 0; i < n; i++) {
		if (!strcmp(words[i], "--json") && !cmd->json)
			cmd->json = true;
		else if (cmd->sel.kind != SEL_ALL || !strcmp(words[i], "--json"))
			return errbuf_set(err, errlen,
					  "'%s': %s takes at most one selector " SEL_FORM " and --json",
					  line, word);
		else if (selector_parse(words[i], &cmd->sel, sub, sizeof(sub)))
			return errbuf_set(err, errlen, "'%s': %s", line, sub);
	}
	cmd->op = op;
	return 0;
}

static int parse_status(const char *line, const char *arg, struct script_cmd *cmd, char *err, size_t errlen)
{
	if (*arg && strcmp(arg, "--json"))
		return errbuf_set(err, errlen, "'%s': status takes nothing or --json", line);
	cmd->json = *arg != '\0';
	cmd->op = SCRIPT_STATUS;
	return 0;
}

/* A verb without arguments (events). */
static int parse_bare(const char *line, const char *word, const char *arg, enum script_op op,
		      struct script_cmd *cmd, char *err, size_t errlen)
{
	if (*arg)
		return errbuf_set(err, errlen, "'%s': %s takes no argument", line, word);
	cmd->op = op;
	return 0;
}

static int parse_sleep(const char *line, const char *arg, struct script_cmd *cmd, char *err, size_t errlen)
{
	if (!*arg)
		return errbuf_set(err, errlen,
				  "'%s': sleep needs a duration (sleep DURATION, such as sleep 30s)",
				  line);
	if (strpbrk(arg, " \t\r"))
		return errbuf_set(err, errlen,
				  "'%s': sleep takes one duration (sleep DURATION, such as sleep 30s)",
				  line);
	if (duration_parse_ms(arg, &cmd->ms))
		return errbuf_set(err, errlen, "'%s': '%s' is not a duration " DURATION_FORM, line, arg);
	cmd->op = SCRIPT_SLEEP;
	return 0;
}

/* wait takes what start= takes, and exit, which here means every target has exited. */
static int parse_wait(const char *line, const char *arg, int64_t now, struct script_cmd *cmd,
		      char *err, size_t errlen)
{
	if (!*arg)
		return errbuf_set(err, errlen,
				  "'%s': wait needs a condition (wait CONDITION: " COND_FORMS ")", line);
	if (!strcmp(arg, "exit")) {
		memset(&cmd->cond, 0, sizeof(cmd->cond));
		cmd->cond.kind = COND_EXIT;
		snprintf(cmd->cond.text, sizeof(cmd->cond.text), "exit");
	} else if (condition_parse(arg, false, now, &cmd->cond, err, errlen)) {
		return -1;
	}
	cmd->op = SCRIPT_WAIT;
	return 0;
}

/* window RULE: RULE is what --window= takes, refused with rule_parse's own message. */
static int parse_window(const char *line, const char *arg, int64_t now, struct script_cmd *cmd,
			char *err, size_t errlen)
{
	if (!*arg)
		return errbuf_set(err, errlen, "'%s': window needs a rule (window " RULE_FORM ")", line);
	cmd->rule = malloc(sizeof(*cmd->rule));
	if (!cmd->rule)
		return errbuf_set(err, errlen, "out of memory");
	if (rule_parse(arg, now, cmd->rule, err, errlen)) {
		free(cmd->rule);
		cmd->rule = NULL;
		return -1;
	}
	cmd->op = SCRIPT_WINDOW;
	return 0;
}

/* Split the trimmed line into its first word and the rest, then dispatch. */
static int parse_command(char *line, int64_t now, struct script_cmd *cmd, char *err, size_t errlen)
{
	static const struct {
		const char *word;
		enum script_op op;
	} targeted[] = {
		{ "start", SCRIPT_START },
		{ "stop", SCRIPT_STOP },
		{ "quit", SCRIPT_QUIT },
		{ "q", SCRIPT_QUIT },
	};
	size_t wlen = strcspn(line, " \t\r");
	char word[8] = "";
	const char *arg = line + wlen;

	while (is_blank(*arg))
		arg++;
	if (wlen < sizeof(word)) { /* longer words are no command: leave word empty */
		memcpy(word, line, wlen);
		word[wlen] = '\0';
	}
	for (size_t i = 0; i < ARRAY_SIZE(targeted); i++)
		if (!strcmp(word, targeted[i].word))
			return parse_targeted(line, word, arg, targeted[i].op, cmd, err, errlen);
	if (!strcmp(word, "status"))
		return parse_status(line, arg, cmd, err, errlen);
	if (!strcmp(word, "sleep"))
		return parse_sleep(line, arg, cmd, err, errlen);
	if (!strcmp(word, "wait"))
		return parse_wait(line, arg, now, cmd, err, errlen);
	if (!strcmp(word, "events"))
		return parse_bare(line, word, arg, SCRIPT_EVENTS, cmd, err, errlen);
	if (!strcmp(word, "window"))
		return parse_window(line, arg, now, cmd, err, errlen);
	return errbuf_set(err, errlen, "'%.*s': unknown command " SCRIPT_FORM, (int)wlen, line);
}

int script_parse_line(const char *line, int64_t now_epoch_ms, struct script_cmd *cmd, char *err,
		      size_t errlen)
{
	const char *s = line ? line : "";
	size_t len;
	char *copy;
	int rc;

	memset(cmd, 0, sizeof(*cmd));
	while (is_blank(*s))
		s++;
	len = strlen(s);
	while (len && is_blank(s[len - 1]))
		len--;
	if (!len || *s == '#')
		return 0; /* SCRIPT_NOP */
	copy = strndup(s, len);
	if (!copy)
		return errbuf_set(err, errlen, "out of memory");
	rc = parse_command(copy, now_epoch_ms, cmd, err, errlen);
	free(copy);
	return rc;
}

void script_cmd_free(struct script_cmd *cmd)
{
	if (!cmd)
		return;
	condition_free(&cmd->cond);
	rule_free(cmd->rule);
	free(cmd->rule);
	cmd->rule = NULL;
}
