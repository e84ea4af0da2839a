/* SPDX-License-Identifier: MIT */
/*
 * Window rules and script commands, parsed (pure functions, no I/O except
 * where noted):
 *
 *   --window=start=COND[,stop=COND][,repeat=N][,every=DURATION]
 *   --commands=FILE lines (also the console's and --control's):
 *     start [SEL] | stop [SEL] | quit [SEL] | status [--json] | sleep DURATION | wait COND
 *     | events | window RULE
 *   SEL: all | pid=N | container=ID|NAME | user=NAME|UID
 *
 * A condition is one of open, exec:GLOB, call:LIB:SYMBOL#N, +DURATION,
 * at:TIME, signal:NAME, file:PATH, exit, slow:LIB:SYMBOL>LIMIT,
 * gap:LIB:SYMBOL>LIMIT, stall:LIB:SYMBOL>DURATION (LIMIT: a duration with
 * us, ms, s, m or h, or a multiple of the typical value such as 3x or 1.5x). Errors are one line naming the bad
 * part, without a trailing newline, written into the caller's buffer.
 *
 * Errors: convention 2 of docs/ERRORS.md (-1, the line in the caller's buffer;
 * the duration, time and signal parsers' only failure is "not valid").
 */
#ifndef DYNPROF_RULE_H
#define DYNPROF_RULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/compiler.h"

#define RULE_MAX_REPEAT 1000000 /* windows one rule may open per target */

enum cond_kind {
	COND_NONE = 0, /* no condition (a rule without stop=) */
	COND_OPEN,     /* the target's first card open (start only) */
	COND_EXEC,     /* the target runs a binary matching glob (start only) */
	COND_CALL,     /* the count-th call of lib:symbol in the target */
	COND_AFTER, /* +DURATION: ms after the session started (start) / the window opened (stop) */
	COND_AT,    /* at:TIME: wall clock, epoch_ms */
	COND_SIGNAL, /* signal:NAME: signo sent to dynprof */
	COND_FILE,   /* file:PATH appears */
	COND_EXIT,   /* the target exits (stop only) */
	COND_SLOW,   /* slow:LIB:SYMBOL>LIMIT: a call of lib:symbol longer than LIMIT */
	COND_GAP, /* gap:LIB:SYMBOL>LIMIT: two consecutive calls' entries further apart than LIMIT */
	COND_STALL, /* stall:LIB:SYMBOL>DURATION: no call of lib:symbol for DURATION */
};

/* The conditions that probe a function: call:, slow:, gap:, stall:. */
static inline bool cond_probes(int kind)
{
	return kind == COND_CALL || kind == COND_SLOW || kind == COND_GAP || kind == COND_STALL;
}

#define COND_MULT_ONE 1000 /* mult_milli of 1x */
#define COND_MULT_MAX 1000 /* the largest multiple (the kernel's products stay in 64 bits) */

struct condition {
	enum cond_kind kind;
	int64_t ms;        /* COND_AFTER: duration in ms; COND_AT: epoch ms (UTC) */
	int signo;         /* COND_SIGNAL */
	uint64_t count;    /* COND_CALL: N >= 1 */
	uint64_t limit_ns; /* SLOW, GAP: the limit (0 with a multiple); STALL: DURATION (>= 1 ms) */
	uint32_t mult_milli; /* SLOW, GAP: LIMIT as a multiple of the typical value, in 1/1000 (> 1000); 0: none */
	char *glob; /* COND_EXEC: fnmatch pattern (matched against the exe path and its basename) */
	char *path; /* COND_FILE: the path as given */
	char *lib;  /* cond_probes(): a path (contains '/') or a library name */
	char *symbol;   /* cond_probes() */
	char text[256]; /* the condition as given, for messages and events */
};

struct window_rule {
	struct condition start;
	struct condition stop; /* kind COND_NONE: until the target's exit or quit */
	int repeat;            /* windows per target: 1 unless repeat= or every= says otherwise;
				   0 = unbounded (every= without repeat=) */
	int64_t every_ms; /* every=: windows after the first open this long after the previous one opened; 0: none */
	char text[512]; /* the rule as given (after "--window=") */
};

/*
 * Parse a duration: N followed by ms, s, m or h (500ms, 30s, 10m, 1h);
 * a bare N means seconds. No sign, fraction, blank or other suffix.
 * Returns 0 and *ms (>= 1), or -1 (also when it does not fit int64_t).
 */
int duration_parse_ms(const char *text, int64_t *ms) DP_MUST_CHECK;

/* A whole number then us, ms, s, m or h (slow:'s LIMIT form), in ns. 0 or -EINVAL. */
int duration_parse_ns(const char *text, uint64_t *ns) DP_MUST_CHECK;

/*
 * Parse at:TIME's TIME into epoch milliseconds: ISO-8601 date and time
 * with a zone ("2026-12-01T12:00:00Z", "...T12:00:00.250+08:00", "+0800",
 * "2026-12-01 12:00:00Z" also accepted), or "@EPOCH" (seconds, may have a
 * fraction). Fractions take 1 to 9 digits; digits finer than 1 ms are
 * dropped. A time without a zone is refused (nodes may differ). Does not
 * depend on TZ. 0 or -1.
 */
int time_parse_epoch_ms(const char *text, int64_t *epoch_ms) DP_MUST_CHECK;

/*
 * A signal name, with or without "SIG", any case: "USR1", "SIGUSR1",
 * "usr1", "RTMIN+2", "RTMAX-1"... Numbers are not names. Any signal is
 * returned, even those condition_parse refuses (KILL, STOP, INT, TERM,
 * HUP, CHLD, PIPE). 0 or -1.
 */
int signal_parse(const char *text, int *signo) DP_MUST_CHECK;

/*
 * Parse one condition. `for_stop` selects which kinds are allowed
 * (open/exec only for start, exit only for stop). `now_epoch_ms` is the
 * wall clock: an at: time not after it can never fire and is an error.
 * signal: refuses signals that cannot be caught or that dynprof uses;
 * slow:/gap:/stall: refuse what can never fire (a limit not positive, a
 * multiple not above 1x, a multiple for stall:).
 * 0, or -1 with the message in err and *c left with nothing to free.
 */
int condition_parse(const char *text, bool for_stop, int64_t now_epoch_ms, struct condition *c,
		    char *err, size_t errlen) DP_MUST_CHECK;
void condition_free(struct condition *c);

/*
 * Parse a --window value. Items are split at a ',' only where a key
 * (start=, stop=, repeat=, every=) follows, so globs, paths and symbols
 * may hold commas. Besides each condition's own checks, refuses
 * rules that can never do what they say: no start=, unknown or repeated
 * keys, repeat=/every= out of range, repeat > 1 or every= without stop=
 * or with stop=exit (such a window ends only with the target), repeat > 1
 * without every= whose start condition can fire only once (open, exec, at:).
 * 0, or -1 with the message in err (which quotes the bad part) and *r left
 * with nothing to free.
 */
int rule_parse(const char *text, int64_t now_epoch_ms, struct window_rule *r, char *err,
	       size_t errlen) DP_MUST_CHECK;
void rule_free(struct window_rule *r);

/*
 * Which targets a start, stop or quit is for. Matched when the command
 * runs (control/select.c), against the targets present then, with the
 * meaning --container and --user have (model/match.h):
 *   all                 every target (as no selector): the session's window
 *   pid=N               the target whose host pid is N
 *   container=ID|NAME   as --container: the engine's name, the full id, or
 *                       an id prefix of at least 4 hex digits
 *   user=NAME|UID       as --user: a UID is the target's real uid on the
 *                       host; a NAME the host's name of it, or the name the
 *                       target's own passwd gives it (a container's users
 *                       are its own)
 */
enum sel_kind { SEL_ALL = 0, SEL_PID, SEL_CONTAINER, SEL_USER };

#define SEL_VALUE_MAX 96 /* a container name (namespace/pod) or a user name */
#define SEL_FORMS "all, pid=N, container=ID|NAME, user=NAME|UID"

struct selector {
	enum sel_kind kind;
	int pid;                   /* SEL_PID: >= 1 */
	int64_t uid;               /* SEL_USER: the uid given as a number; -1: a name (in value) */
	char value[SEL_VALUE_MAX]; /* SEL_CONTAINER: id, prefix or name; SEL_USER: the name */
	char text[SEL_VALUE_MAX + 16]; /* as given ("pid=12"); "" when none was given */
};

/*
 * Parse one selector word (no blanks). 0, or -1 with err naming the bad
 * part: an unknown key, an empty value, a pid that is not 1..999999999, a
 * uid above 4294967294, a name or container with characters outside
 * printable ASCII (or a container value too long).
 */
int selector_parse(const char *text, struct selector *sel, char *err, size_t errlen) DP_MUST_CHECK;

enum script_op {
	SCRIPT_NOP = 0, /* a blank line or a comment (#...) */
	SCRIPT_START,   /* start [SEL]: sel */
	SCRIPT_STOP,    /* stop [SEL]: sel */
	SCRIPT_QUIT,    /* quit [SEL]: sel (SEL_ALL: the run ends) */
	SCRIPT_SLEEP,   /* sleep DURATION: ms */
	SCRIPT_WAIT,    /* wait COND: cond (a start-side condition, or exit) */
	SCRIPT_EVENTS,  /* events: the --control connection becomes a stream of events */
	SCRIPT_WINDOW,  /* window RULE: rule (a --window value) added while running */
	SCRIPT_STATUS,  /* status [--json]: json */
};

struct script_cmd {
	enum script_op op;
	int64_t ms;
	struct condition cond;
	struct window_rule *rule; /* SCRIPT_WINDOW (freed by script_cmd_free unless taken) */
	struct selector sel;
	bool json;
};

/* The command's word ("start", "status"...), for its "ack" line. */
const char *script_op_name(enum script_op op);

/*
 * Parse one command line (no newline; surrounding blanks ignored). `wait`
 * accepts what start= accepts (its +DURATION counting from when the wait
 * begins) plus exit (every target has exited). 0, or -1 with err.
 */
int script_parse_line(const char *line, int64_t now_epoch_ms, struct script_cmd *cmd, char *err,
		      size_t errlen) DP_MUST_CHECK;
void script_cmd_free(struct script_cmd *cmd);

#endif /* DYNPROF_RULE_H */
