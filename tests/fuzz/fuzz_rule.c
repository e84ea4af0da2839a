// SPDX-License-Identifier: MIT
/*
 * --window rules and --commands/--control lines (config/rule.c): text from
 * a user, a script file or a remote client. First byte: which parser.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "fuzz.h"
#include "config/rule.h"

#define NOW_MS 1796083200000LL /* 2026-12-01T00:00:00Z: fixed, so findings replay */

/*
 * The model of a selector: within its documented bounds, and written
 * back as "<command> <text>" it parses to the same selector.
 */
static void check_selector(const struct script_cmd *cmd)
{
	const struct selector *sel = &cmd->sel;
	struct script_cmd again;
	char line[sizeof(sel->text) + 16], err[256];

	FUZZ_CHECK(fuzz_terminated(sel->value, sizeof(sel->value)));
	FUZZ_CHECK(fuzz_terminated(sel->text, sizeof(sel->text)));
	if (cmd->op != SCRIPT_START && cmd->op != SCRIPT_STOP && cmd->op != SCRIPT_QUIT) {
		FUZZ_CHECK(sel->kind == SEL_ALL && !sel->text[0]);
		return;
	}
	switch (sel->kind) {
	case SEL_ALL:
		FUZZ_CHECK(!sel->text[0]);
		return;
	case SEL_PID:
		FUZZ_CHECK(sel->pid >= 1 && sel->pid <= 999999999);
		break;
	case SEL_USER:
		FUZZ_CHECK(sel->uid >= -1 && sel->uid <= 4294967294LL);
		FUZZ_CHECK(sel->uid >= 0 || sel->value[0]);
		break;
	case SEL_CONTAINER:
		FUZZ_CHECK(sel->value[0]);
		break;
	default:
		FUZZ_CHECK(!"unknown selector kind");
	}
	for (const char *c = sel->value; *c; c++)
		FUZZ_CHECK(*c > ' ' && *c <= '~');
	snprintf(line, sizeof(line), "%s %s", script_op_name(cmd->op), sel->text);
	FUZZ_CHECK(script_parse_line(line, NOW_MS, &again, err, sizeof(err)) == 0);
	FUZZ_CHECK(again.op == cmd->op && again.sel.kind == sel->kind && again.sel.pid == sel->pid &&
		   again.sel.uid == sel->uid && !strcmp(again.sel.value, sel->value));
	script_cmd_free(&again);
}

/* What an accepted timed condition must hold: a limit that can be crossed. */
static void check_timed(const struct condition *c)
{
	if (c->kind == COND_SLOW || c->kind == COND_GAP)
		FUZZ_CHECK((c->limit_ns > 0) != (c->mult_milli > COND_MULT_ONE) &&
			   (!c->mult_milli || !c->limit_ns) &&
			   c->mult_milli <= COND_MULT_MAX * COND_MULT_ONE);
	if (c->kind == COND_STALL)
		FUZZ_CHECK(c->limit_ns >= 1000000 && c->ms >= 1 && c->mult_milli == 0);
	if (cond_probes(c->kind))
		FUZZ_CHECK(c->lib && *c->lib && c->symbol && *c->symbol);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256], *t;
	struct window_rule r;
	struct script_cmd cmd;
	struct condition c;
	int64_t ms;
	int sig;

	if (size < 1)
		return 0;
	t = fuzz_cstr(data + 1, size - 1);
	err[0] = '\0';
	switch (data[0] % 6) {
	case 0:
		if (rule_parse(t, NOW_MS, &r, err, sizeof(err)) == 0) {
			check_timed(&r.start);
			check_timed(&r.stop);
			rule_free(&r);
		}
		break;
	case 1:
		if (script_parse_line(t, NOW_MS, &cmd, err, sizeof(err)) == 0) {
			check_selector(&cmd);
			check_timed(&cmd.cond);
			script_cmd_free(&cmd);
		}
		break;
	case 2:
	case 3:
		if (condition_parse(t, data[0] % 6 == 3, NOW_MS, &c, err, sizeof(err)) == 0) {
			check_timed(&c);
			condition_free(&c);
		}
		break;
	case 4:
		if (duration_parse_ms(t, &ms) == 0)
			FUZZ_CHECK(ms >= 0);
		fuzz_ignore(time_parse_epoch_ms(t, &ms));
		break;
	default:
		fuzz_ignore(signal_parse(t, &sig));
		break;
	}
	FUZZ_CHECK(fuzz_terminated(err, sizeof(err)));
	free(t);
	return 0;
}
