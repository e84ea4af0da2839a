// SPDX-License-Identifier: MIT
/*
 * Command scripts (control/script.c) against the smallest real host: a
 * launch-mode session with no targets yet (start/stop only flip its
 * window flag and fan out to nobody) and a trigger engine with no rules (waits on a file).
 * What is checked: the order of acks and errors, sleep holding the lines
 * after it, a wait met when its file appears, a refused wait not hanging,
 * quit, and --commands files.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "config/options.h"
#include "control/script.h"
#include "trigger/trigger_view.h"
#include "shared/clock.h"
#include "session/session.h"
#include "trigger/triggers.h"
#include "unit.h"

struct replies {
	char log[1024];
	int n;
};

static void on_reply(void *ctx, const char *text)
{
	struct replies *r = ctx;
	size_t len = strlen(r->log);

	snprintf(r->log + len, sizeof(r->log) - len, "%s%s", len ? "|" : "", text);
	r->n++;
}

struct host {
	struct options opts;
	struct session *s;
	struct triggers *tg;
	bool quit;
	struct script_host h;
	struct replies r;
	struct script *sc;
};

static bool host_up(struct host *x)
{
	memset(x, 0, sizeof(*x));
	x->opts.timeout_ms = 1000;
	session_open_launch(&x->s, &x->opts, "/out");
	x->tg = x->s ? triggers_new(x->s, NULL, 0) : NULL;
	x->h = (struct script_host){ .s = x->s, .tg = x->tg, .quit_requested = &x->quit };
	x->sc = x->tg ? script_new(&x->h, on_reply, &x->r) : NULL;
	return x->sc != NULL;
}

static void host_down(struct host *x)
{
	script_free(x->sc);
	if (x->tg)
		triggers_close(x->tg);
	session_close(x->s);
}

/* Step the script until idle or `ms` passed, sleeping as it asks. */
static void run_for(struct host *x, int ms)
{
	int64_t end = clock_ms() + ms;

	for (script_step(x->sc); !script_idle(x->sc) && clock_ms() < end; script_step(x->sc)) {
		int t = script_timeout_ms(x->sc);

		usleep((useconds_t)(t < 0 || t > 20 ? 20 : t) * 1000);
		triggers_tick(x->tg);
	}
}

TEST(commands_run_in_order_and_are_acked)
{
	struct host x;

	REQUIRE(host_up(&x));
	CHECK(script_idle(x.sc));
	CHECK_INT(script_timeout_ms(x.sc), -1);
	script_push_line(x.sc, "start");
	script_push_line(x.sc, "# a comment, then a blank line");
	script_push_line(x.sc, "");
	CHECK(!script_idle(x.sc));
	script_step(x.sc);
	CHECK(session_window_open(x.s));
	script_push_line(x.sc, "stop");
	script_step(x.sc);
	CHECK(!session_window_open(x.s));
	CHECK(script_idle(x.sc));
	CHECK_STR(x.r.log, "ack start|ack stop");
	CHECK(!x.quit);
	host_down(&x);
}

TEST(sleep_holds_the_commands_after_it)
{
	struct host x;
	int64_t t0;
	int left;

	REQUIRE(host_up(&x));
	script_push_line(x.sc, "start");
	script_push_line(x.sc, "sleep 300ms");
	script_push_line(x.sc, "stop");
	t0 = clock_ms();
	script_step(x.sc);
	CHECK(session_window_open(x.s));
	CHECK_STR(x.r.log, "ack start");
	left = script_timeout_ms(x.sc);
	CHECK(left > 200 && left <= 300);
	script_step(x.sc); /* too early: nothing moves */
	CHECK(session_window_open(x.s));
	run_for(&x, 2000);
	CHECK(clock_ms() - t0 >= 300);
	CHECK(!session_window_open(x.s));
	CHECK_STR(x.r.log, "ack start|ack sleep|ack stop");
	host_down(&x);
}

TEST(wait_for_a_file_is_met_when_it_appears)
{
	char path[] = "/tmp/dynprof-script-XXXXXX", line[64];
	struct host x;
	int fd;

	REQUIRE(host_up(&x));
	fd = mkstemp(path);
	REQUIRE(fd >= 0);
	close(fd);
	unlink(path);
	snprintf(line, sizeof(line), "wait file:%s", path);
	script_push_line(x.sc, line);
	script_push_line(x.sc, "start");
	run_for(&x, 200);
	CHECK(!session_window_open(x.s));
	CHECK_STR(x.r.log, "");
	CHECK(script_timeout_ms(x.sc) > 0);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	REQUIRE(fd >= 0);
	close(fd);
	run_for(&x, 2000);
	CHECK(session_window_open(x.s));
	CHECK_STR(x.r.log, "ack wait|ack start");
	unlink(path);
	host_down(&x);
}

TEST(refused_wait_is_an_error_and_the_script_goes_on)
{
	struct host x;

	REQUIRE(host_up(&x));
	/* No process model in this run: card opens cannot be waited for. */
	script_push_line(x.sc, "wait open");
	script_push_line(x.sc, "start");
	run_for(&x, 1000);
	CHECK(session_window_open(x.s));
	CHECK_INT(x.r.n, 2);
	CHECK(!strncmp(x.r.log, "error: wait open:", 17));
	CHECK(strstr(x.r.log, "|ack start") != NULL);
	host_down(&x);
}

TEST(bad_lines_answered_at_once_and_quit_stops_the_run)
{
	struct host x;

	REQUIRE(host_up(&x));
	script_push_line(x.sc, "frobnicate");
	CHECK_INT(x.r.n, 1);
	CHECK(!strncmp(x.r.log, "error: ", 7));
	CHECK(script_idle(x.sc));
	script_push_line(x.sc, "quit");
	script_push_line(x.sc, "start");
	script_step(x.sc);
	CHECK(x.quit);
	CHECK(!session_window_open(x.s)); /* quit ends the step: start waits for the console */
	CHECK(strstr(x.r.log, "|ack quit") != NULL);
	host_down(&x);
}

TEST(commands_file_is_parsed_whole_before_anything_runs)
{
	char path[] = "/tmp/dynprof-script-XXXXXX";
	const struct condition *conds[4];
	struct host x;
	FILE *f;
	int fd;

	REQUIRE(host_up(&x));
	fd = mkstemp(path);
	REQUIRE(fd >= 0);
	f = fdopen(fd, "w");
	REQUIRE(f != NULL);
	fputs("start\nwait file:/nonexistent-dynprof/x\n# done\nstop\n", f);
	fclose(f);
	CHECK_INT(script_load_file(x.sc, path), 0);
	CHECK_INT(script_conditions(x.sc, conds, 4), 1);
	CHECK_STR(conds[0]->text, "file:/nonexistent-dynprof/x");
	CHECK(!session_window_open(x.s)); /* loaded, not run */
	f = fopen(path, "w");
	REQUIRE(f != NULL);
	fputs("start\nsleep forever\n", f);
	fclose(f);
	CHECK_INT(script_load_file(x.sc, path), -1);
	/* A NUL would cut "st\0op" to "st": refused, as --control refuses it. */
	f = fopen(path, "w");
	REQUIRE(f != NULL);
	fwrite("start\nstop\0start\n", 1, 18, f);
	fclose(f);
	CHECK_INT(script_load_file(x.sc, path), -1);
	CHECK_INT(script_load_file(x.sc, "/nonexistent-dynprof/cmds"), -1);
	unlink(path);
	host_down(&x);
}

TEST(window_adds_a_rule_and_acks_its_number)
{
	struct window_rule r;
	char parser[600], want[800];
	struct host x;

	REQUIRE(host_up(&x));
	CHECK(rule_parse("start=+1x", clock_wall_us() / 1000, &r, parser, sizeof(parser)) == -1);
	script_push_line(x.sc, "window start=+1s,stop=+1s");
	script_push_line(x.sc, "window start=+1x"); /* refused at once, with the parser's message */
	script_push_line(x.sc, "window");
	script_push_line(x.sc, "window start=signal:USR2,stop=+1s");
	script_step(x.sc);
	snprintf(want, sizeof(want),
		 "error: %s|error: 'window': window needs a rule (window (start=COND[,stop=COND][,repeat=N][,every=DURATION]))|ack window 1|ack window 2",
		 parser);
	CHECK_STR(x.r.log, want);
	/* Added rules never end a run, nor keep one going after its input. */
	CHECK_INT(triggers_rule_count(x.tg), 2);
	CHECK_STR(triggers_rule(x.tg, 1)->text, "start=signal:USR2,stop=+1s");
	CHECK(triggers_rule(x.tg, 2) == NULL);
	CHECK(!triggers_have_rules(x.tg));
	CHECK(!triggers_exhausted(x.tg));
	host_down(&x);
}

static int streams;

static int fake_stream(void *ctx, char *err, size_t errlen)
{
	(void)ctx;
	(void)err;
	(void)errlen;
	streams++;
	return 0;
}

TEST(events_streams_and_what_follows_is_ignored)
{
	struct host x;

	REQUIRE(host_up(&x));
	script_push_line(x.sc, "events"); /* no client to stream to */
	script_push_line(x.sc, "events now");
	script_step(x.sc);
	CHECK_STR(x.r.log,
		  "error: 'events now': events takes no argument|error: events needs a unix control socket");
	x.r.log[0] = '\0';
	x.h.stream = fake_stream;
	script_set_host(x.sc, &x.h);
	script_push_line(x.sc, "events");
	script_push_line(x.sc, "start"); /* queued after it: dropped */
	script_step(x.sc);
	CHECK_INT(streams, 1);
	CHECK_STR(x.r.log, "ack events");
	script_push_line(x.sc, "start");
	script_push_line(x.sc, "bogus");
	script_step(x.sc);
	CHECK(!session_window_open(x.s));
	CHECK_STR(x.r.log, "ack events");
	CHECK(script_idle(x.sc));
	host_down(&x);
}

/* A selector other than all matches targets present now: none here, so each is refused. */
TEST(selectors_matching_nothing_are_refused_and_change_nothing)
{
	struct host x;

	REQUIRE(host_up(&x));
	script_push_line(x.sc, "start pid=12");
	script_push_line(x.sc, "stop container=trainjob");
	script_push_line(x.sc, "quit user=0");
	script_push_line(x.sc, "start user=no-such-user-here");
	script_push_line(x.sc, "start all");
	script_step(x.sc);
	CHECK_STR(x.r.log, "error: no target matches pid=12|error: no target matches container=trainjob|"
			   "error: no target matches user=0|"
			   "error: no target matches user=no-such-user-here|ack start");
	CHECK(session_window_open(x.s)); /* only `start all` opened the session's window */
	CHECK(!x.quit);                  /* quit SEL never ends the run */
	script_push_line(x.sc, "quit all");
	script_step(x.sc);
	CHECK(x.quit);
	host_down(&x);
}

static void fake_stats(void *ctx, struct status_stats *st)
{
	(void)ctx;
	st->mode = "follow";
	st->have_lost = true;
	st->lost_events = 7;
	st->have_model = true;
	st->model_procs = 123;
}

TEST(status_is_one_json_line_then_its_ack)
{
	struct host x;

	REQUIRE(host_up(&x));
	script_set_stats(x.sc, fake_stats, NULL);
	script_push_line(x.sc, "status --json");
	script_step(x.sc);
	CHECK(strstr(x.r.log, "{\"schema\":1,\"mode\":\"follow\",") == x.r.log);
	CHECK(strstr(x.r.log, "\"kernel\":{\"events_lost\":7,\"rescans\":null,\"model_processes\":123}"));
	CHECK(strstr(x.r.log, "\"targets\":[],\"rules\":[],\"target_count\":0}|ack status"));
	CHECK_INT(x.r.n, 2);
	x.r.log[0] = '\0';
	x.r.n = 0;
	script_push_line(x.sc, "status");
	script_step(x.sc);
	CHECK(strstr(x.r.log, "mode follow, up 0h00m00s, 0 targets, output /out|") == x.r.log);
	CHECK(strstr(x.r.log, "|kernel: 7 events lost, - rescans, 123 processes in the model|HOST PID"));
	CHECK(strstr(x.r.log, "LAST FOLDER|ack status"));
	CHECK_INT(x.r.n, 5);
	host_down(&x);
}

UNIT_MAIN()
