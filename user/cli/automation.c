// SPDX-License-Identifier: MIT
/* --window, --commands and --control set up together (see automation.h). */
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cli/automation.h"
#include "control/control.h"
#include "shared/clock.h"
#include "control/remote.h"
#include "report/report.h"
#include "control/script.h"
#include "kernel/callcount.h"
#include "shared/decimal.h"
#include "trigger/triggers.h"

#define MAX_SCRIPT_CONDS 256

static int parse_rules(struct automation *a, const struct options *o)
{
	char err[600];

	for (int i = 0; i < o->nwindows; i++) {
		if (rule_parse(o->windows[i], clock_wall_us() / 1000, &a->rules[i], err, sizeof(err))) {
			report_error("Argument --window: %s", err);
			return -1;
		}
		a->nrules++;
	}
	return 0;
}

/* What this host cannot give a rule or a commands file's wait (BPF uprobes): known before any connect. */
static int needs_refused(const struct automation *a)
{
	const struct condition *conds[MAX_SCRIPT_CONDS];
	int n = a->commands ? script_conditions(a->commands, conds, MAX_SCRIPT_CONDS) : 0;
	char err[700];

	if (triggers_check_needs(a->rules, a->nrules, NULL, 0, err, sizeof(err)))
		return report_error("Argument --window: %s", err), -1;
	if (triggers_check_needs(NULL, 0, conds, n, err, sizeof(err)))
		return report_error("Argument --commands: wait %s", err), -1;
	return 0;
}

static void add_signal(sigset_t *set, const struct condition *c)
{
	if (c->kind == COND_SIGNAL)
		sigaddset(set, c->signo);
}

/*
 * The rules' and the script's signals blocked from here, before the
 * targets are found and joined: one sent meanwhile waits for the engine's
 * signalfd (the rule then fires at once) instead of taking its default
 * action, which for USR1 ends dynprof.
 */
static void block_signals(const struct automation *a)
{
	const struct condition *conds[MAX_SCRIPT_CONDS];
	int n = a->commands ? script_conditions(a->commands, conds, MAX_SCRIPT_CONDS) : 0;
	sigset_t set;

	sigemptyset(&set);
	for (int i = 0; i < a->nrules; i++) {
		add_signal(&set, &a->rules[i].start);
		add_signal(&set, &a->rules[i].stop);
	}
	for (int i = 0; i < n; i++)
		add_signal(&set, conds[i]);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

int automation_prepare(struct automation *a, const struct options *o)
{
	char err[600];

	memset(a, 0, sizeof(*a));
	if (parse_rules(a, o))
		return -1;
	if (o->commands) {
		a->commands = script_new(&(struct script_host){ .quit_requested = &a->quit_requested },
					 NULL, NULL);
		if (!a->commands || script_load_file(a->commands, o->commands))
			return -1;
	}
	if (needs_refused(a))
		return -1;
	block_signals(a);
	if (o->control && !(a->control = control_open(o->control, err, sizeof(err)))) {
		report_error("Argument %s", err);
		return -1;
	}
	return 0;
}

static bool is_open(const struct condition *c)
{
	return c->kind == COND_OPEN;
}

bool automation_needs_model(const struct automation *a)
{
	const struct condition *conds[MAX_SCRIPT_CONDS];
	int n = a->commands ? script_conditions(a->commands, conds, MAX_SCRIPT_CONDS) : 0;

	for (int i = 0; i < a->nrules; i++)
		if (is_open(&a->rules[i].start))
			return true;
	for (int i = 0; i < n; i++)
		if (is_open(conds[i]))
			return true;
	/* Not for --control alone: watching every open costs every process (docs/BENCHMARKS.md). */
	return false;
}

/* call:, slow:, gap:, stall: LIB:SYMBOL in one pid: -1 (printed) when it can never fire. */
static int check_call(const struct condition *c, int pid)
{
	char err[PATH_MAX + 256];

	if (!cond_probes(c->kind) || !callcount_check_pid(pid, c->lib, c->symbol, err, sizeof(err)))
		return 0;
	if (c->kind == COND_CALL)
		report_target_error(pid, "dynprof: pid %d: call:%s:%s can never fire: %s", pid,
				    c->lib, c->symbol, callcount_err_text(err, pid));
	else
		report_target_error(pid, "dynprof: pid %d: %s can never fire: %s", pid, c->text,
				    callcount_err_text(err, pid));
	return -1;
}

static int check_pid(const struct automation *a, int pid)
{
	const struct condition *conds[MAX_SCRIPT_CONDS];
	int n = a->commands ? script_conditions(a->commands, conds, MAX_SCRIPT_CONDS) : 0, bad = 0;

	for (int i = 0; i < a->nrules; i++)
		bad |= check_call(&a->rules[i].start, pid) | check_call(&a->rules[i].stop, pid);
	for (int i = 0; i < n; i++)
		bad |= check_call(conds[i], pid);
	return bad;
}

int automation_check_targets(const struct automation *a, const struct options *o)
{
	int bad = 0;

	if (!o->pid_list || !strcmp(o->pid_list, "auto") || o->ncontainers)
		return 0; /* pids chosen by the scan: checked when probed */
	for (const char *p = o->pid_list;;) {
		size_t len = strcspn(p, ",");
		uint64_t pid;

		/* A bad value is the pid list's error, said by the session. */
		if (!decimal_span(p, len, 1, 999999999, &pid))
			bad |= check_pid(a, (int)pid);
		if (!p[len])
			break;
		p += len + 1;
	}
	return bad ? -1 : 0;
}

/* The script's waits need their signals, paths and probes watched from the start. */
static int register_script(struct automation *a)
{
	const struct condition *conds[MAX_SCRIPT_CONDS];
	int n = script_conditions(a->commands, conds, MAX_SCRIPT_CONDS);

	for (int i = 0; i < n; i++)
		if (triggers_add_condition(a->triggers, conds[i]))
			return -1;
	return 0;
}

int automation_start(struct automation *a, struct session *s, struct procmodel *model)
{
	struct script_host host = { .s = s, .quit_requested = &a->quit_requested };

	/*
	 * Always, even with no rule: the console, --commands and --control may
	 * add one while running (`window RULE`). With none it watches nothing.
	 */
	a->triggers = triggers_new(s, a->rules, a->nrules);
	if (!a->triggers || (a->commands && register_script(a)) || triggers_start(a->triggers, model))
		return -1;
	host.tg = a->triggers;
	if (a->commands)
		script_set_host(a->commands, &host);
	if (a->control && !(a->remote = remote_new(a->control, &host))) {
		report_error("dynprof: out of memory");
		return -1;
	}
	return 0;
}

void automation_sources(struct automation *a, struct console_sources *src)
{
	src->triggers = a->triggers;
	src->commands = a->commands;
	src->remote = a->remote;
	src->quit_requested = &a->quit_requested;
}

void automation_close(struct automation *a)
{
	remote_free(a->remote);
	script_free(a->commands);
	triggers_close(a->triggers);
	control_close(a->control);
	for (int i = 0; i < a->nrules; i++)
		rule_free(&a->rules[i]);
	memset(a, 0, sizeof(*a));
}
