// SPDX-License-Identifier: MIT
/* Window rules, conditions, durations, times, signals and script lines (rule.h). */
#include <signal.h>
#include <stdlib.h>
#include <time.h>

#include "config/rule.h"
#include "unit.h"

/* 2026-11-30T17:50:00Z: "now" for every parse below. */
#define NOW 1796061000000LL

static char err[512];

static int64_t dur(const char *text)
{
	int64_t ms = -7;

	return duration_parse_ms(text, &ms) ? -1 : ms;
}

static int64_t when(const char *text)
{
	int64_t ms = -7;

	return time_parse_epoch_ms(text, &ms) ? -1 : ms;
}

static int sig(const char *text)
{
	int signo = -7;

	return signal_parse(text, &signo) ? -1 : signo;
}

/* The error condition_parse gives, "" if it accepts. */
static const char *cond_err(const char *text, bool for_stop)
{
	struct condition c;

	err[0] = '\0';
	if (!condition_parse(text, for_stop, NOW, &c, err, sizeof(err))) {
		condition_free(&c);
		return "";
	}
	return err;
}

static const char *rule_err(const char *text)
{
	struct window_rule r;

	err[0] = '\0';
	if (!rule_parse(text, NOW, &r, err, sizeof(err))) {
		rule_free(&r);
		return "";
	}
	return err;
}

static const char *script_err(const char *line)
{
	struct script_cmd cmd;

	err[0] = '\0';
	if (!script_parse_line(line, NOW, &cmd, err, sizeof(err))) {
		script_cmd_free(&cmd);
		return "";
	}
	return err;
}

static bool contains(const char *s, const char *part)
{
	return strstr(s, part) != NULL;
}

/* ---- durations ---- */

TEST(durations_take_each_unit_and_bare_seconds)
{
	CHECK_INT(dur("500ms"), 500);
	CHECK_INT(dur("30s"), 30000);
	CHECK_INT(dur("10m"), 600000);
	CHECK_INT(dur("1h"), 3600000);
	CHECK_INT(dur("7"), 7000);
	CHECK_INT(dur("1ms"), 1);
	CHECK_INT(dur("9223372036854775807ms"), INT64_MAX);
}

TEST(durations_refuse_bad_forms)
{
	const char *bad[] = { "",
			      "0",
			      "0ms",
			      "-5s",
			      "+5s",
			      "1.5s",
			      "5 s",
			      " 5s",
			      "5s ",
			      "5x",
			      "5sec",
			      "s",
			      "9223372036854775808ms",
			      "9223372036854776s",
			      "99999999999999999999" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (dur(bad[i]) != -1) {
			printf("  accepted '%s'\n", bad[i]);
			CHECK(0);
		}
	CHECK_INT(duration_parse_ms(NULL, &(int64_t){ 0 }), -1);
}

/* ---- times ---- */

TEST(iso_times_with_z_and_offsets)
{
	CHECK_INT(when("2025-12-01T12:00:00Z"), 1764590400000LL);
	CHECK_INT(when("2025-12-01T20:00:00+08:00"), 1764590400000LL);
	CHECK_INT(when("2025-12-01T20:00:00+0800"), 1764590400000LL);
	CHECK_INT(when("2025-12-01T07:00:00-05:00"), 1764590400000LL);
	CHECK_INT(when("2026-12-01T20:00:00+08:00"), when("2026-12-01T12:00:00Z"));
	CHECK_INT(when("2026-12-01T12:00:00Z"), 1796126400000LL);
	CHECK_INT(when("2026-12-01T10:00:00+05:30"), 1796099400000LL);
	CHECK_INT(when("2025-12-01 12:00:00Z"), 1764590400000LL);
	CHECK_INT(when("1970-01-01T00:00:00Z"), 0);
}

TEST(iso_fractions_are_milliseconds)
{
	CHECK_INT(when("2025-12-01T12:00:00.250Z"), 1764590400250LL);
	CHECK_INT(when("2025-12-01T12:00:00.5+00:00"), 1764590400500LL);
	CHECK_INT(when("2025-12-01T12:00:00.123456789Z"), 1764590400123LL);
	CHECK_INT(when("2025-12-01T12:00:00.Z"), -1);
	CHECK_INT(when("2025-12-01T12:00:00.1234567891Z"), -1);
}

TEST(leap_days_and_leap_seconds)
{
	CHECK_INT(when("2024-02-29T00:00:00Z"), 1709164800000LL);
	CHECK_INT(when("2000-02-29T23:59:59Z"), 951868799000LL);
	CHECK_INT(when("2026-02-29T00:00:00Z"), -1);
	CHECK_INT(when("1900-02-29T00:00:00Z"), -1);
	CHECK_INT(when("2026-12-31T23:59:60Z"), 1798761600000LL);
	CHECK_INT(when("1969-12-31T23:59:59Z"), -1000);
}

TEST(iso_times_refuse_bad_fields_and_junk)
{
	const char *bad[] = {
		"2026-13-01T00:00:00Z",
		"2026-00-01T00:00:00Z",
		"2026-04-31T00:00:00Z",
		"2026-12-00T00:00:00Z",
		"2026-12-01T24:00:00Z",
		"2026-12-01T12:60:00Z",
		"2026-12-01T12:00:61Z",
		"2026-12-01T12:00Z",
		"2026-12-01  12:00:00Z",
		"2026-12-01t12:00:00Z",
		"2026-12-01T12:00:00Zx",
		"2026-12-01T12:00:00 Z",
		"2026-12-01T12:00:00+8:00",
		"2026-12-01T12:00:00+08:0",
		"2026-12-01T12:00:00+24:00",
		"2026-12-01T12:00:00+08",
		"26-12-01T12:00:00Z",
		"",
		"tomorrow",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (when(bad[i]) != -1) {
			printf("  accepted '%s'\n", bad[i]);
			CHECK(0);
		}
}

TEST(times_without_a_zone_are_refused)
{
	CHECK_INT(when("2026-12-01T12:00:00"), -1);
	CHECK_INT(when("2026-12-01 12:00:00.5"), -1);
	CHECK(contains(cond_err("at:2026-12-01T12:00:00", false), "no zone"));
}

TEST(epoch_seconds_with_optional_fraction)
{
	CHECK_INT(when("@1764590400"), 1764590400000LL);
	CHECK_INT(when("@1764590400.5"), 1764590400500LL);
	CHECK_INT(when("@0"), 0);
	CHECK_INT(when("@"), -1);
	CHECK_INT(when("@-1"), -1);
	CHECK_INT(when("@1."), -1);
	CHECK_INT(when("@1x"), -1);
	CHECK_INT(when("@ 1"), -1);
	CHECK_INT(when("@99999999999999999"), -1);
}

TEST(times_do_not_depend_on_tz)
{
	const char *old = getenv("TZ");
	char *saved = old ? strdup(old) : NULL;

	setenv("TZ", "Asia/Shanghai", 1);
	tzset();
	CHECK_INT(when("2025-12-01T12:00:00Z"), 1764590400000LL);
	setenv("TZ", "America/New_York", 1);
	tzset();
	CHECK_INT(when("2025-12-01T20:00:00+08:00"), 1764590400000LL);
	CHECK_STR(cond_err("at:2020-01-01T00:00:00Z", false),
		  "at:2020-01-01T00:00:00Z is in the past (now 2026-11-30T17:50:00Z)");
	if (saved)
		setenv("TZ", saved, 1);
	else
		unsetenv("TZ");
	tzset();
	free(saved);
}

/* ---- signals ---- */

TEST(signal_names_with_or_without_sig_any_case)
{
	CHECK_INT(sig("USR1"), SIGUSR1);
	CHECK_INT(sig("SIGUSR1"), SIGUSR1);
	CHECK_INT(sig("usr2"), SIGUSR2);
	CHECK_INT(sig("sigWinch"), SIGWINCH);
	CHECK_INT(sig("RTMIN"), SIGRTMIN);
	CHECK_INT(sig("SIGRTMIN+2"), SIGRTMIN + 2);
	CHECK_INT(sig("rtmax-1"), SIGRTMAX - 1);
	CHECK_INT(sig("RTMAX"), SIGRTMAX);
	CHECK_INT(sig("KILL"), SIGKILL); /* a name; condition_parse refuses it */
}

TEST(signal_numbers_and_junk_are_refused)
{
	const char *bad[] = { "",          "SIG",     "10",      "FOO",    "USR1 ",  "SIGSIGUSR1",
			      "RTMIN+100", "RTMIN-1", "RTMAX+1", "RTMIN+", "RTMIN+x" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (sig(bad[i]) != -1) {
			printf("  accepted '%s'\n", bad[i]);
			CHECK(0);
		}
}

/* ---- conditions ---- */

TEST(conditions_of_each_form)
{
	struct condition c;

	CHECK_INT(condition_parse("open", false, NOW, &c, err, sizeof(err)), 0);
	CHECK_INT(c.kind, COND_OPEN);
	CHECK_STR(c.text, "open");
	condition_free(&c);

	CHECK_INT(condition_parse("exec:*python*", false, NOW, &c, err, sizeof(err)), 0);
	CHECK_INT(c.kind, COND_EXEC);
	CHECK_STR(c.glob, "*python*");
	condition_free(&c);

	CHECK_INT(condition_parse("+90s", true, NOW, &c, err, sizeof(err)), 0);
	CHECK_INT(c.kind, COND_AFTER);
	CHECK_INT(c.ms, 90000);

	CHECK_INT(condition_parse("at:2026-12-01T20:00:00+08:00", false, NOW, &c, err, sizeof(err)), 0);
	CHECK_INT(c.kind, COND_AT);
	CHECK_INT(c.ms, 1796126400000LL);
	CHECK_STR(c.text, "at:2026-12-01T20:00:00+08:00");

	CHECK_INT(condition_parse("signal:SIGUSR2", true, NOW, &c, err, sizeof(err)), 0);
	CHECK_INT(c.kind, COND_SIGNAL);
	CHECK_INT(c.signo, SIGUSR2);

	CHECK_INT(condition_parse("file:relative/go", false, NOW, &c, err, sizeof(err)), 0);
	CHECK_INT(c.kind, COND_FILE);
	CHECK_STR(c.path, "relative/go");
	condition_free(&c);

	CHECK_INT(condition_parse("exit", true, NOW, &c, err, sizeof(err)), 0);
	CHECK_INT(c.kind, COND_EXIT);
}

TEST(call_splits_lib_at_first_colon_and_symbol_at_last_hash)
{
	struct condition c;

	CHECK_INT(condition_parse("call:libfoo.so:step#3", false, NOW, &c, err, sizeof(err)), 0);
	CHECK_INT(c.kind, COND_CALL);
	CHECK_STR(c.lib, "libfoo.so");
	CHECK_STR(c.symbol, "step");
	CHECK_INT(c.count, 3);
	condition_free(&c);

	CHECK_INT(condition_parse("call:/opt/lib/libx.so:ns::f#18446744073709551615", true, NOW, &c,
				  err, sizeof(err)),
		  0);
	CHECK_STR(c.lib, "/opt/lib/libx.so");
	CHECK_STR(c.symbol, "ns::f");
	CHECK(c.count == UINT64_MAX);
	condition_free(&c);

	CHECK_INT(condition_parse("call:lib#1.so:a#b#7", false, NOW, &c, err, sizeof(err)), 0);
	CHECK_STR(c.lib, "lib#1.so");
	CHECK_STR(c.symbol, "a#b");
	CHECK_INT(c.count, 7);
	condition_free(&c);
}

TEST(slow_gap_stall_take_a_duration_or_a_multiple)
{
	struct condition c;

	CHECK_INT(condition_parse("slow:libfoo.so:ns::step>200ms", false, NOW, &c, err, sizeof(err)), 0);
	CHECK_INT(c.kind, COND_SLOW);
	CHECK_STR(c.lib, "libfoo.so");
	CHECK_STR(c.symbol, "ns::step");
	CHECK(c.limit_ns == 200000000ULL);
	CHECK_INT(c.mult_milli, 0);
	condition_free(&c);

	CHECK_INT(condition_parse("slow:/opt/libx.so:f>500us", true, NOW, &c, err, sizeof(err)), 0);
	CHECK(c.limit_ns == 500000ULL);
	condition_free(&c);

	CHECK_INT(condition_parse("slow:demo:step>3x", false, NOW, &c, err, sizeof(err)), 0);
	CHECK_INT(c.mult_milli, 3000);
	CHECK(c.limit_ns == 0);
	condition_free(&c);

	CHECK_INT(condition_parse("gap:demo:a>b>1.25x", false, NOW, &c, err, sizeof(err)), 0);
	CHECK_INT(c.kind, COND_GAP);
	CHECK_STR(c.symbol, "a>b");
	CHECK_INT(c.mult_milli, 1250);
	condition_free(&c);

	CHECK_INT(condition_parse("gap:demo:step>2s", false, NOW, &c, err, sizeof(err)), 0);
	CHECK(c.limit_ns == 2000000000ULL);
	condition_free(&c);

	CHECK_INT(condition_parse("stall:demo:step>30s", false, NOW, &c, err, sizeof(err)), 0);
	CHECK_INT(c.kind, COND_STALL);
	CHECK_INT(c.ms, 30000);
	CHECK(c.limit_ns == 30000000000ULL);
	CHECK_STR(c.text, "stall:demo:step>30s");
	condition_free(&c);
}

TEST(slow_gap_stall_refuse_what_can_never_fire)
{
	CHECK_STR(cond_err("slow:libfoo.so:step>0ms", false),
		  "slow:libfoo.so:step>0ms: the limit '0ms' must be positive (a duration such as 200ms, 500us "
		  "or 2s, or a multiple of the typical value such as 3x or 1.5x)");
	CHECK(contains(cond_err("slow:libfoo.so:step>1x", false),
		       "the multiple '1x' must be more than 1x"));
	CHECK(contains(cond_err("gap:libfoo.so:step>0.5x", false), "'0.5x' must be more than 1x"));
	CHECK(contains(cond_err("gap:libfoo.so:step>1.000x", false), "must be more than 1x"));
	CHECK_STR(cond_err("gap:libfoo.so:step>1.001x", false), "");
	CHECK_STR(cond_err("gap:libfoo.so:step>1000x", false), "");
	CHECK(contains(cond_err("gap:libfoo.so:step>1000.001x", false), "'1000.001x' is more than 1000x"));
	CHECK(contains(cond_err("slow:libfoo.so:step>1.0001x", false), "'1.0001x' is not a limit"));
	CHECK(contains(cond_err("slow:libfoo.so:step>x", false), "'x' is not a limit"));
	CHECK(contains(cond_err("slow:libfoo.so:step>-3ms", false), "'-3ms' is not a limit"));
	CHECK(contains(cond_err("slow:libfoo.so:step>3", false), "'3' is not a limit"));
	CHECK(contains(cond_err("slow:libfoo.so:step>3ns", false), "'3ns' is not a limit"));
	CHECK(contains(cond_err("slow:libfoo.so:step>99999999999999999h", false), "is not a limit"));
	CHECK(contains(cond_err("slow:libfoo.so:step>", false), "'' is not a limit"));
	CHECK(contains(cond_err("slow:libfoo.so:step", false), "the limit is missing"));
	CHECK(contains(cond_err("gap:libfoo.so", false), "no ':' between library and symbol (gap:"));
	CHECK(contains(cond_err("gap::step>1s", false), "the library is empty"));
	CHECK(contains(cond_err("slow:lib:>1s", false), "the symbol is empty"));
	CHECK(contains(cond_err("stall:lib:step>3x", false), "stall: takes a duration, not a multiple"));
	CHECK(contains(cond_err("stall:lib:step>0s", false), "the duration '0s' must be positive"));
	CHECK(contains(cond_err("stall:lib:step>0ms", true), "must be positive"));
	CHECK(contains(cond_err("stall:lib:step>soon", false), "'soon' is not a duration"));
	CHECK(contains(cond_err("slowly:lib:step>1s", false), "unknown condition"));
}

TEST(slow_gap_stall_in_rules_and_waits)
{
	struct window_rule r;
	struct script_cmd cmd;

	CHECK_INT(rule_parse("start=slow:lib,1.so:f,g>3x,stop=+5s,repeat=3", NOW, &r, err, sizeof(err)),
		  0);
	CHECK_INT(r.start.kind, COND_SLOW);
	CHECK_STR(r.start.lib, "lib,1.so");
	CHECK_STR(r.start.symbol, "f,g");
	CHECK_INT(r.repeat, 3);
	rule_free(&r);
	CHECK_INT(rule_parse("start=stall:demo:step>1s,stop=call:demo:step#1", NOW, &r, err, sizeof(err)),
		  0);
	CHECK_INT(r.stop.kind, COND_CALL);
	rule_free(&r);
	CHECK_INT(rule_parse("start=call:demo:step#10,stop=gap:demo:step>2x", NOW, &r, err, sizeof(err)),
		  0);
	CHECK_INT(r.stop.kind, COND_GAP);
	rule_free(&r);
	CHECK_STR(rule_err("start=gap:demo:step>1s,every=10s"),
		  "every=10s needs stop=: a window without stop= ends only when the target exits");
	CHECK(contains(rule_err("start=slow:demo:step>0us,stop=+1s"), "must be positive"));

	CHECK_INT(script_parse_line("wait slow:demo:step>50ms", NOW, &cmd, err, sizeof(err)), 0);
	CHECK_INT(cmd.op, SCRIPT_WAIT);
	CHECK_INT(cmd.cond.kind, COND_SLOW);
	script_cmd_free(&cmd);
	CHECK(contains(script_err("wait stall:demo:step>2x"), "not a multiple"));
}

TEST(call_errors_quote_the_bad_part)
{
	CHECK_STR(cond_err("call:libfoo.so:step#x", false),
		  "call:libfoo.so:step#x: the call number 'x' is not a positive integer (call:LIB:SYMBOL#N)");
	CHECK(contains(cond_err("call:libfoo.so:step#0", false), "'0' is not a positive integer"));
	CHECK(contains(cond_err("call:libfoo.so:step#+1", false), "'+1' is not a positive integer"));
	CHECK(contains(cond_err("call:libfoo.so:step#2 ", false), "'2 ' is not a positive integer"));
	CHECK(contains(cond_err("call:libfoo.so:step#18446744073709551616", false),
		       "not a positive integer"));
	CHECK(contains(cond_err("call:libfoo.so:step#", false), "'' is not a positive integer"));
	CHECK(contains(cond_err("call:libfoo.so:step", false), "the call number is missing"));
	CHECK(contains(cond_err("call:libfoo.so", false), "no ':' between library and symbol"));
	CHECK(contains(cond_err("call::step#1", false), "the library is empty"));
	CHECK(contains(cond_err("call:libfoo.so:#1", false), "the symbol is empty"));
}

TEST(empty_globs_paths_and_bad_values_are_errors)
{
	CHECK_STR(cond_err("exec:", false), "exec:: the glob is empty (exec:GLOB)");
	CHECK_STR(cond_err("file:", true), "file:: the path is empty (file:PATH)");
	CHECK(contains(cond_err("+5x", true), "+5x: '5x' is not a duration"));
	CHECK(contains(cond_err("+", false), "is not a duration"));
	CHECK(contains(cond_err("at:2026-13-01T00:00:00Z", false),
		       "'2026-13-01T00:00:00Z' is not a time"));
	CHECK(contains(cond_err("signal:FOO", false), "signal:FOO: 'FOO' is not a signal name"));
	CHECK(contains(cond_err("", false), "empty condition"));
}

TEST(unknown_conditions_list_the_forms)
{
	CHECK_STR(cond_err("foo:bar", false),
		  "'foo:bar': unknown condition (open, exec:GLOB, call:LIB:SYMBOL#N, +DURATION, at:TIME, "
		  "signal:NAME, file:PATH, exit, slow:LIB:SYMBOL>LIMIT, gap:LIB:SYMBOL>LIMIT, "
		  "stall:LIB:SYMBOL>DURATION)");
	CHECK(contains(cond_err("opened", false), "'opened': unknown condition"));
	CHECK(contains(cond_err("OPEN", false), "'OPEN': unknown condition"));
	CHECK(contains(cond_err("open ", false), "'open ': unknown condition"));
}

TEST(start_only_and_stop_only_kinds)
{
	CHECK_STR(cond_err("exit", false), "start=exit: 'exit' is a stop condition (the target exits)");
	CHECK(contains(cond_err("open", true), "stop=open: 'open' is a start condition"));
	CHECK(contains(cond_err("exec:python", true), "stop=exec:python: 'exec:' is a start condition"));
}

TEST(at_in_the_past_or_now_is_an_error)
{
	CHECK_STR(cond_err("at:2020-01-01T00:00:00Z", false),
		  "at:2020-01-01T00:00:00Z is in the past (now 2026-11-30T17:50:00Z)");
	CHECK(contains(cond_err("at:@1796061000", true), "is in the past"));
	CHECK_STR(cond_err("at:@1796061000.001", true), "");
}

TEST(signals_dynprof_needs_or_cannot_catch_are_refused)
{
	CHECK(contains(cond_err("signal:KILL", false), "signal:KILL: SIGKILL cannot be caught"));
	CHECK(contains(cond_err("signal:sigstop", false), "SIGSTOP cannot be caught"));
	CHECK(contains(cond_err("signal:INT", false), "SIGINT makes dynprof quit"));
	CHECK(contains(cond_err("signal:TERM", true), "SIGTERM makes dynprof quit"));
	CHECK(contains(cond_err("signal:HUP", true), "SIGHUP makes dynprof quit"));
	CHECK(contains(cond_err("signal:CHLD", false), "SIGCHLD is used by dynprof internally"));
	CHECK(contains(cond_err("signal:PIPE", false), "SIGPIPE is used by dynprof internally"));
	CHECK_STR(cond_err("signal:RTMIN+1", false), "");
}

/* ---- rules ---- */

TEST(rule_defaults_for_repeat)
{
	struct window_rule r;

	CHECK_INT(rule_parse("start=open", NOW, &r, err, sizeof(err)), 0);
	CHECK_INT(r.start.kind, COND_OPEN);
	CHECK_INT(r.stop.kind, COND_NONE);
	CHECK_INT(r.repeat, 1);
	CHECK_INT(r.every_ms, 0);
	rule_free(&r);

	CHECK_INT(rule_parse("start=signal:USR1,stop=+10s,every=1m", NOW, &r, err, sizeof(err)), 0);
	CHECK_INT(r.repeat, 0);
	CHECK_INT(r.every_ms, 60000);
	CHECK_INT(r.stop.ms, 10000);
	CHECK_STR(r.text, "start=signal:USR1,stop=+10s,every=1m");
	rule_free(&r);

	CHECK_INT(rule_parse("start=+5s,stop=+10s,repeat=3,every=30s", NOW, &r, err, sizeof(err)), 0);
	CHECK_INT(r.repeat, 3);
	CHECK_INT(r.start.ms, 5000);
	rule_free(&r);

	CHECK_INT(rule_parse("repeat=5,stop=signal:USR2,start=signal:USR1", NOW, &r, err, sizeof(err)), 0);
	CHECK_INT(r.repeat, 5);
	CHECK_INT(r.stop.signo, SIGUSR2);
	rule_free(&r);
}

TEST(rule_commas_inside_paths_and_globs)
{
	struct window_rule r;

	CHECK_INT(rule_parse("start=file:/tmp/a,b,stop=+1s", NOW, &r, err, sizeof(err)), 0);
	CHECK_STR(r.start.path, "/tmp/a,b");
	CHECK_INT(r.stop.kind, COND_AFTER);
	CHECK_INT(r.stop.ms, 1000);
	rule_free(&r);

	CHECK_INT(rule_parse("start=exec:*{train,eval}.py,stop=file:/tmp/x,y,", NOW, &r, err, sizeof(err)),
		  0);
	CHECK_STR(r.start.glob, "*{train,eval}.py");
	CHECK_STR(r.stop.path, "/tmp/x,y,");
	rule_free(&r);
}

TEST(rule_key_errors)
{
	CHECK(contains(rule_err("stop=+1s"), "'stop=+1s': no start="));
	CHECK(contains(rule_err(""), "the rule is empty"));
	CHECK_STR(rule_err("start=open,start=open"), "'start=' given twice");
	CHECK_STR(rule_err("start=signal:USR1,stop=+1s,every=1s,every=2s"), "'every=' given twice");
	CHECK_STR(rule_err("start=open,foo=1"), "'foo': unknown key (start=, stop=, repeat=, every=)");
	CHECK_STR(rule_err("begin=open"), "'begin': unknown key (start=, stop=, repeat=, every=)");
	CHECK(contains(rule_err("open"), "'open': not key=value"));
	CHECK(contains(rule_err("start=open,"), "an empty item"));
	CHECK(contains(rule_err("start=signal:USR1,stop=+1s,repeat=2,x"), "'x': not key=value"));
}

TEST(rule_value_errors)
{
	CHECK_STR(rule_err("start=signal:USR1,stop=+1s,repeat=0"),
		  "repeat=0: the number of windows must be from 1 to 1000000");
	CHECK(contains(rule_err("start=signal:USR1,stop=+1s,repeat=1000001"), "repeat=1000001:"));
	CHECK_STR(rule_err("start=signal:USR1,stop=+1s,repeat=1000000"), "");
	CHECK(contains(rule_err("start=signal:USR1,stop=+1s,repeat=-1"), "repeat=-1:"));
	CHECK(contains(rule_err("start=signal:USR1,stop=+1s,every=5x"),
		       "every=5x: '5x' is not a duration"));
	CHECK_STR(rule_err("start=exit"), "start=exit: 'exit' is a stop condition (the target exits)");
	CHECK(contains(rule_err("start=open,stop=open"), "stop=open: 'open' is a start condition"));
	CHECK(contains(rule_err("start=call:libfoo.so:step#x"), "the call number 'x'"));
}

TEST(rules_that_cannot_do_what_they_say)
{
	CHECK_STR(rule_err("start=signal:USR1,repeat=3"),
		  "repeat=3 needs stop=: a window without stop= ends only when the target exits");
	CHECK_STR(rule_err("start=signal:USR1,every=10s"),
		  "every=10s needs stop=: a window without stop= ends only when the target exits");
	CHECK(contains(rule_err("start=signal:USR1,stop=exit,repeat=2"), "needs a stop= other than exit"));
	CHECK_STR(rule_err("start=open,stop=+1s,repeat=3"),
		  "start=open fires once per target: add every=DURATION to repeat it");
	CHECK(contains(rule_err("start=exec:python,stop=+1s,repeat=2"), "start=exec:python fires once"));
	CHECK(contains(rule_err("start=at:2026-12-01T00:00:00Z,stop=+1s,repeat=2"), "fires once"));
	CHECK_STR(rule_err("start=open,stop=+1s,repeat=3,every=1m"), "");
	CHECK_STR(rule_err("start=open,stop=exit"), "");
	CHECK_STR(rule_err("start=open,repeat=1"), "");
}

/* ---- script lines ---- */

static int op_of(const char *line)
{
	struct script_cmd cmd;
	int op;

	if (script_parse_line(line, NOW, &cmd, err, sizeof(err)))
		return -1;
	op = cmd.op;
	script_cmd_free(&cmd);
	return op;
}

TEST(script_simple_commands_blanks_and_comments)
{
	CHECK_INT(op_of(""), SCRIPT_NOP);
	CHECK_INT(op_of(" \t "), SCRIPT_NOP);
	CHECK_INT(op_of("  # start"), SCRIPT_NOP);
	CHECK_INT(op_of("start"), SCRIPT_START);
	CHECK_INT(op_of("\tstop \r"), SCRIPT_STOP);
	CHECK_INT(op_of("quit"), SCRIPT_QUIT);
	CHECK_INT(op_of("q"), SCRIPT_QUIT);
}

TEST(script_sleep_and_wait)
{
	struct script_cmd cmd;

	CHECK_INT(script_parse_line("sleep 30s", NOW, &cmd, err, sizeof(err)), 0);
	CHECK_INT(cmd.op, SCRIPT_SLEEP);
	CHECK_INT(cmd.ms, 30000);

	CHECK_INT(script_parse_line("wait  exit ", NOW, &cmd, err, sizeof(err)), 0);
	CHECK_INT(cmd.op, SCRIPT_WAIT);
	CHECK_INT(cmd.cond.kind, COND_EXIT);
	CHECK_STR(cmd.cond.text, "exit");

	CHECK_INT(script_parse_line("wait open", NOW, &cmd, err, sizeof(err)), 0);
	CHECK_INT(cmd.cond.kind, COND_OPEN);

	CHECK_INT(script_parse_line("wait +2m", NOW, &cmd, err, sizeof(err)), 0);
	CHECK_INT(cmd.cond.ms, 120000);

	CHECK_INT(script_parse_line("wait file:/tmp/my go", NOW, &cmd, err, sizeof(err)), 0);
	CHECK_STR(cmd.cond.path, "/tmp/my go");
	script_cmd_free(&cmd);
}

TEST(script_events_and_window)
{
	struct script_cmd cmd;
	struct window_rule r;
	char err[600], parser[600];

	CHECK_INT(script_parse_line("  events ", NOW, &cmd, err, sizeof(err)), 0);
	CHECK_INT(cmd.op, SCRIPT_EVENTS);
	CHECK(contains(script_err("events all"), "'events all': events takes no argument"));

	CHECK_INT(script_parse_line("window start=call:libascendcl.so:aclmdlExecute#1000,stop=+10s",
				    NOW, &cmd, err, sizeof(err)),
		  0);
	CHECK_INT(cmd.op, SCRIPT_WINDOW);
	REQUIRE(cmd.rule);
	CHECK_INT(cmd.rule->start.kind, COND_CALL);
	CHECK_STR(cmd.rule->start.symbol, "aclmdlExecute");
	CHECK_INT(cmd.rule->stop.ms, 10000);
	CHECK_STR(cmd.rule->text, "start=call:libascendcl.so:aclmdlExecute#1000,stop=+10s");
	script_cmd_free(&cmd);
	CHECK(cmd.rule == NULL);

	/* Refused with the --window parser's own words. */
	CHECK_INT(rule_parse("stop=+1s", NOW, &r, parser, sizeof(parser)), -1);
	CHECK_STR(script_err("window stop=+1s"), parser);
	CHECK(contains(script_err("window"), "'window': window needs a rule"));
	CHECK(contains(script_err("window start=at:2020-01-01T00:00:00Z"), "is in the past"));
}

TEST(script_errors)
{
	CHECK_STR(script_err("foo"),
		  "'foo': unknown command (start [SEL] [--json], stop [SEL] [--json], quit [SEL] [--json], status [--json], sleep DURATION, wait CONDITION, events, window RULE)");
	CHECK(contains(script_err("restart now"), "'restart': unknown command"));
	CHECK(contains(script_err("Start"), "'Start': unknown command"));
	CHECK(contains(script_err("start now"),
		       "'start now': 'now': unknown selector (all, pid=N, container=ID|NAME, user=NAME|UID)"));
	CHECK(contains(script_err("q 1"), "'q 1': '1': unknown selector"));
	CHECK(contains(script_err("stop pid=1 pid=2"), "stop takes at most one selector"));
	CHECK(contains(script_err("sleep"), "sleep needs a duration"));
	CHECK(contains(script_err("sleep 5 s"), "sleep takes one duration"));
	CHECK(contains(script_err("sleep 1.5s"), "'1.5s' is not a duration"));
	CHECK(contains(script_err("wait"), "wait needs a condition"));
	CHECK(contains(script_err("wait bogus"), "'bogus': unknown condition"));
	CHECK(contains(script_err("wait at:2020-01-01T00:00:00Z"), "is in the past"));
	CHECK(contains(script_err("wait signal:TERM"), "makes dynprof quit"));
}

/* ---- selectors and status ---- */

static struct script_cmd parsed(const char *line)
{
	struct script_cmd cmd;

	err[0] = '\0';
	if (script_parse_line(line, NOW, &cmd, err, sizeof(err)))
		memset(&cmd, 0xff, sizeof(cmd.op)); /* op -1: refused */
	return cmd;
}

TEST(script_selectors)
{
	struct script_cmd c;

	c = parsed("start");
	CHECK_INT(c.op, SCRIPT_START);
	CHECK_INT(c.sel.kind, SEL_ALL);
	CHECK_STR(c.sel.text, "");
	c = parsed("stop all");
	CHECK_INT(c.op, SCRIPT_STOP);
	CHECK_INT(c.sel.kind, SEL_ALL);
	c = parsed(" start\tpid=1234 ");
	CHECK_INT(c.op, SCRIPT_START);
	CHECK_INT(c.sel.kind, SEL_PID);
	CHECK_INT(c.sel.pid, 1234);
	CHECK_STR(c.sel.text, "pid=1234");
	c = parsed("quit container=trainjob");
	CHECK_INT(c.op, SCRIPT_QUIT);
	CHECK_INT(c.sel.kind, SEL_CONTAINER);
	CHECK_STR(c.sel.value, "trainjob");
	c = parsed("q container=k8s-ns/pod-0");
	CHECK_INT(c.op, SCRIPT_QUIT);
	CHECK_STR(c.sel.value, "k8s-ns/pod-0");
	c = parsed("stop user=0");
	CHECK_INT(c.sel.kind, SEL_USER);
	CHECK_INT(c.sel.uid, 0);
	c = parsed("stop user=4294967294");
	CHECK_INT(c.sel.uid, 4294967294LL);
	c = parsed("start user=alice_1.x-y$");
	CHECK_INT(c.sel.kind, SEL_USER);
	CHECK_INT(c.sel.uid, -1);
	CHECK_STR(c.sel.value, "alice_1.x-y$");
}

TEST(script_selector_errors)
{
	CHECK(contains(script_err("start pid="), "'pid=': no value after '='"));
	CHECK(contains(script_err("start pid=0"), "'pid=0': '0' is not a pid"));
	CHECK(contains(script_err("start pid=12x"), "'12x' is not a pid"));
	CHECK(contains(script_err("start pid=-3"), "'-3' is not a pid"));
	CHECK(contains(script_err("start pid=1000000000"), "is not a pid"));
	CHECK(contains(script_err("stop user=4294967295"), "'4294967295' is not a uid"));
	CHECK(contains(script_err("stop user=a;b"), "'a;b' is not a user name or uid"));
	CHECK(contains(script_err("stop container="), "no value after '='"));
	CHECK(contains(script_err("stop container=\x01x"), "printable ASCII"));
	CHECK(contains(script_err("stop uid=0"), "'uid=0': unknown selector"));
	CHECK(contains(script_err("stop All"), "'All': unknown selector"));
	CHECK(contains(script_err("stop pidx=1"), "unknown selector"));
	{
		char line[SEL_VALUE_MAX + 32];

		snprintf(line, sizeof(line), "stop container=%0*d", SEL_VALUE_MAX, 7);
		CHECK(contains(script_err(line), "at most 95 characters"));
	}
}

/* start, stop, quit take a selector and --json, in either order, each once. */
TEST(script_targeted_json)
{
	struct script_cmd c;

	c = parsed("start");
	CHECK(!c.json);
	CHECK_INT(c.sel.kind, SEL_ALL);
	c = parsed("start --json");
	CHECK_INT(c.op, SCRIPT_START);
	CHECK(c.json);
	CHECK_INT(c.sel.kind, SEL_ALL);
	c = parsed("stop pid=7 --json");
	CHECK_INT(c.op, SCRIPT_STOP);
	CHECK(c.json);
	CHECK_INT(c.sel.kind, SEL_PID);
	c = parsed("quit  --json   pid=7");
	CHECK_INT(c.op, SCRIPT_QUIT);
	CHECK(c.json);
	CHECK_INT(c.sel.kind, SEL_PID);
	CHECK(contains(script_err("start --json --json"), "start takes at most one selector"));
	CHECK(contains(script_err("stop pid=1 --json pid=2"), "stop takes at most one selector"));
	CHECK(contains(script_err("start --yaml"), "'--yaml': unknown selector"));
}

TEST(script_status)
{
	struct script_cmd c;

	c = parsed("status");
	CHECK_INT(c.op, SCRIPT_STATUS);
	CHECK(!c.json);
	c = parsed("status  --json ");
	CHECK_INT(c.op, SCRIPT_STATUS);
	CHECK(c.json);
	CHECK(contains(script_err("status --yaml"), "'status --yaml': status takes nothing or --json"));
	CHECK(contains(script_err("status --json x"), "status takes nothing or --json"));
	CHECK_STR(script_op_name(SCRIPT_STATUS), "status");
	CHECK_STR(script_op_name(SCRIPT_QUIT), "quit");
	CHECK_STR(script_op_name((enum script_op)99), "?");
}

/* ---- freeing ---- */

TEST(frees_are_safe_on_zeroed_structs_and_twice)
{
	struct condition c = { 0 };
	struct window_rule r = { 0 };
	struct script_cmd cmd = { 0 };

	condition_free(&c);
	rule_free(&r);
	script_cmd_free(&cmd);
	CHECK_INT(rule_parse("start=call:libfoo.so:step#2,stop=file:/tmp/done", NOW, &r, err, sizeof(err)),
		  0);
	rule_free(&r);
	CHECK(r.start.lib == NULL && r.start.symbol == NULL && r.stop.path == NULL);
	rule_free(&r);
	CHECK_INT(script_parse_line("wait exec:python", NOW, &cmd, err, sizeof(err)), 0);
	script_cmd_free(&cmd);
	CHECK(cmd.cond.glob == NULL);
	script_cmd_free(&cmd);
}

/* Under ASan (make SANITIZE=1) a leak on these error paths fails the run. */
TEST(errors_leave_nothing_to_free)
{
	struct window_rule r;
	struct condition c;

	CHECK_INT(rule_parse("start=exec:x,stop=file:/y,repeat=0", NOW, &r, err, sizeof(err)), -1);
	CHECK(r.start.glob == NULL && r.stop.path == NULL);
	CHECK_INT(rule_parse("start=call:l:s#1,stop=call:l:s#0", NOW, &r, err, sizeof(err)), -1);
	CHECK(r.start.lib == NULL && r.stop.lib == NULL);
	CHECK_INT(condition_parse("call:l:s#x", false, NOW, &c, err, sizeof(err)), -1);
	CHECK(c.lib == NULL && c.symbol == NULL);
}

UNIT_MAIN()
