// SPDX-License-Identifier: MIT
/*
 * --window rules and --commands/--control lines (config/rule.c): text from
 * a user, a script file or a remote client. First byte: which parser.
 */
#include <stdbool.h>

#include "fuzz.h"
#include "config/rule.h"

#define NOW_MS 1796083200000LL /* 2026-12-01T00:00:00Z: fixed, so findings replay */

/* What an accepted timed condition must hold: a limit that can be crossed. */
static void check_timed(const struct condition *c)
{
	if (c->kind == COND_SLOW || c->kind == COND_GAP)
		FUZZ_CHECK((c->limit_ns > 0) != (c->mult_milli > COND_MULT_ONE) && (!c->mult_milli || !c->limit_ns) &&
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
