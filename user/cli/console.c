// SPDX-License-Identifier: MIT
/* The console loop (see console.h). */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "shared/array_size.h"
#include "shared/clock.h"
#include "common/evloop.h"
#include "cli/console.h"
#include "control/remote.h"
#include "control/script.h"
#include "trigger/triggers.h"
#include "model/tracker.h"
#include "model/procmodel.h"
#include "report/report.h"

#define LINE_MAX_LEN 4096
#define TRIGGER_POLL 2 /* triggers_pollfds: its signal/file fd and the call counter */

static const char usage_text[] =
	"Usage:\n"
	"\t start:                 Start a collection in interactive mode.\n"
	"\t stop:                  Stop a collection that was started in interactive mode.\n"
	"\t quit, q:               Stop collection and quit interactive mode.\n"
	"\t window RULE:           Add a --window rule (start=COND[,stop=COND][,repeat=N][,every=D]).\n"
	"\t help, h:               Show this list.\n";

/* dynprof's own, after msprof's list (which stays as msprof prints it). */
static const char usage_more[] = "\t start|stop|quit SEL:   Only the targets SEL names now: all, pid=N,\n"
				 "\t                        container=ID|NAME, user=NAME|UID.\n"
				 "\t status [--json]:       The targets, their windows and rules.\n";

struct console {
	struct session *s;
	struct discover *disc;
	struct tracker *tracker;
	const struct console_sources *src;
	const struct console_mode *mode; /* src's */
	int sigfd;
	bool tty;
	bool input_open;
	char line[LINE_MAX_LEN];
	size_t len;
	int exit_status;    /* -1 while running */
	bool commands_done; /* the --commands script has run to its end */
	bool exits_failing; /* reading target exits failed last round (said once) */
	struct evloop loop; /* the sources below, polled in one round */
	int64_t started_ms; /* when the console began (status's uptime) */
	unsigned sent; /* the number of its last command: the next line waits for its replies */
};

static sigset_t handled_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	return set;
}

int console_signalfd(void)
{
	sigset_t set = handled_signals();
	int fd = signalfd(-1, &set, SFD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int console_block_signals(void)
{
	sigset_t set = handled_signals();

	signal(SIGPIPE, SIG_IGN);
	/* A background job inherits SIGINT ignored; we handle it, so undo that. */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	return sigprocmask(SIG_BLOCK, &set, NULL) ? -errno : 0;
}

static void prompt(const struct console *c)
{
	if (c->tty && c->input_open) {
		fputs("> ", stdout);
		fflush(stdout);
	}
}

static void quit(struct console *c, int status)
{
	session_shutdown(c->s);
	if (c->src->triggers)
		triggers_quitting(c->src->triggers);
	c->exit_status = status;
}

/* Rules keep a run going after its input ends; otherwise the end of input is quit. */
static void input_ended(struct console *c)
{
	if (triggers_have_rules(c->src->triggers) || c->src->remote || c->mode->endless)
		return;
	quit(c, 0);
}

/* Trim blanks on both ends, in place. */
static char *trim(char *s)
{
	char *end;

	while (*s == ' ' || *s == '\t' || *s == '\r')
		s++;
	end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		*--end = '\0';
	return s;
}

/* window RULE: added to the trigger engine as a --window rule, from now. */
static void add_rule(struct console *c, const char *text)
{
	struct window_rule r;
	char err[600];

	while (*text == ' ' || *text == '\t')
		text++;
	if (!*text) {
		report_error("dynprof: window needs a rule (window start=COND[,stop=COND][,repeat=N][,every=DURATION])");
		return;
	}
	if (rule_parse(text, clock_wall_us() / 1000, &r, err, sizeof(err))) {
		report_error("dynprof: window: %s", err);
		return;
	}
	if (triggers_add_rule(c->src->triggers, &r, err, sizeof(err)) < 0) {
		report_error("dynprof: window: %s", err);
		rule_free(&r);
	}
}

static bool is_word(const char *cmd, const char *word)
{
	size_t n = strlen(word);

	return !strncmp(cmd, word, n) && (!cmd[n] || cmd[n] == ' ' || cmd[n] == '\t');
}

/* What `status` shows of the layers above the session: mode, uptime, kernel counts. */
static void console_stats(void *ctx, struct status_stats *st)
{
	const struct console *c = ctx;

	st->mode = c->mode->name;
	st->started_ms = c->started_ms;
	if (c->tracker) {
		struct procmodel *m = tracker_model(c->tracker);

		st->have_lost = st->have_rescans = true;
		st->lost_events = tracker_lost_events(c->tracker);
		st->rescans = tracker_rescans(c->tracker);
		st->have_model = m != NULL;
		st->model_procs = m ? procmodel_count(m) : 0;
	} else if (c->disc) {
		/* Attach mode watches exits only: its ring's losses are counted, nothing rescans. */
		st->have_lost = true;
		st->lost_events = discover_lost_events(c->disc);
	}
}

static void print_line(void *ctx, const char *text)
{
	(void)ctx;
	printf("%s\n", text);
}

/* One of the script commands (start/stop/quit with a selector, status): as --control runs it. */
static bool run_script_command(struct console *c, const char *line)
{
	struct script_host h = { .s = c->s, .tg = c->src->triggers, .stats = console_stats, .stats_ctx = c };
	struct script_cmd cmd;
	char err[600];
	bool quit_asked = false;

	h.quit_requested = &quit_asked;
	if (script_parse_line(line, clock_wall_us() / 1000, &cmd, err, sizeof(err))) {
		printf("error: %s\n", err);
		return true;
	}
	if (cmd.op != SCRIPT_START && cmd.op != SCRIPT_STOP && cmd.op != SCRIPT_QUIT &&
	    cmd.op != SCRIPT_STATUS) {
		script_cmd_free(&cmd);
		return false;
	}
	if (script_run_command(&h, &cmd, print_line, NULL, err, sizeof(err)))
		printf("error: %s\n", err);
	script_cmd_free(&cmd);
	if (quit_asked)
		quit(c, 0);
	return true;
}

/* The first word is one of the commands dynprof adds to msprof's console. */
static bool is_script_word(const char *cmd)
{
	static const char *const words[] = { "start", "stop", "quit", "q", "status" };
	size_t len = strcspn(cmd, " \t");

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (len == strlen(words[i]) && !strncmp(cmd, words[i], len))
			return true;
	return false;
}

static void run_one(struct console *c, char *cmd);

/*
 * One line. A command to the targets is numbered (session.h): the next
 * line waits for its replies, so each line sees what the one before did
 * (as msprof's console); rules' and --control's commands do not hold it.
 */
static void run_command(struct console *c, char *raw)
{
	unsigned before = session_command_serial(c->s);

	run_one(c, trim(raw));
	if (session_command_serial(c->s) != before)
		c->sent = session_command_serial(c->s);
}

static bool waiting_for_replies(const struct console *c)
{
	return c->sent && !session_replied(c->s, c->sent);
}

static void run_one(struct console *c, char *cmd)
{
	if (!*cmd)
		return;
	if (!strcmp(cmd, "start")) {
		session_make_room(c->s); /* a window's START and STOP fit, no idle limit near */
		session_command(c->s, PROTO_CMD_START);
	} else if (!strcmp(cmd, "stop"))
		session_command(c->s, PROTO_CMD_STOP);
	else if (!strcmp(cmd, "quit") || !strcmp(cmd, "q"))
		quit(c, 0);
	else if (is_word(cmd, "window"))
		add_rule(c, cmd + strlen("window"));
	else if (!strcmp(cmd, "help") || !strcmp(cmd, "h"))
		printf("%s%s", usage_text, usage_more);
	else if (!is_script_word(cmd) || !run_script_command(c, cmd))
		printf("invalid option -- '%s'\n\n%s%s", cmd, usage_text, usage_more);
	fflush(stdout);
}

/* Run every complete line in the buffer; keep a partial one. */
static void run_lines(struct console *c)
{
	char *nl;

	/* One command at a time: the next line waits for the replies to the one before. */
	while (c->exit_status < 0 && !waiting_for_replies(c) && (nl = memchr(c->line, '\n', c->len))) {
		size_t used = (size_t)(nl - c->line) + 1;

		*nl = '\0';
		run_command(c, c->line);
		memmove(c->line, c->line + used, c->len - used);
		c->len -= used;
		if (c->exit_status < 0 && session_live(c->s))
			prompt(c);
	}
	if (c->len == sizeof(c->line) - 1) { /* an over-long line: run what we have */
		c->line[c->len] = '\0';
		c->len = 0;
		run_command(c, c->line);
	}
}

static void on_input(struct console *c)
{
	ssize_t n = read(STDIN_FILENO, c->line + c->len, sizeof(c->line) - 1 - c->len);

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n > 0) {
		c->len += (size_t)n;
		run_lines(c);
		return;
	}
	/* End of input (or an unreadable stdin) means quit; a last line without newline runs first. */
	c->input_open = false;
	if (c->len) {
		c->line[c->len] = '\0';
		c->len = 0;
		run_command(c, c->line);
	}
	if (c->exit_status < 0)
		input_ended(c);
}

/* The signal waiting in fd, taken (0: none); never blocks. */
static int take_signal(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct signalfd_siginfo si;

	if (fd < 0 || poll(&p, 1, 0) != 1 || read(fd, &si, sizeof(si)) != sizeof(si))
		return 0;
	return (int)si.ssi_signo;
}

int console_take_signal(void)
{
	int fd = console_signalfd(), sig = take_signal(fd);

	if (fd >= 0)
		close(fd);
	return sig;
}

static void on_signal_number(struct console *c, int sig)
{
	if (c->tty)
		fputc('\n', stdout);
	report_info("received SIG%s: stopping open windows and quitting", sigabbrev_np(sig) ?: "?");
	if (c->exit_status < 0)
		quit(c, 128 + sig);
	/* Whatever phase it came in (a stalled STOP, the shutdown itself), the status tells it. */
	c->exit_status = 128 + sig;
	/* Windows are closed first; then the mode hears of it (launch: the application gets it). */
	if (c->mode->signalled)
		c->mode->signalled(c->src->ctx, sig);
}

static void on_signal(struct console *c)
{
	int sig = take_signal(c->sigfd);

	if (sig)
		on_signal_number(c, sig);
}

/* A signal that came while a command ran (signals wait for it): it decides the status. */
static bool late_signal(struct console *c)
{
	int sig = take_signal(c->sigfd);

	if (sig)
		on_signal_number(c, sig);
	return sig != 0;
}

static void on_exit_event(void *ctx, int pid)
{
	session_target_exited(ctx, pid);
}

/* A failure is said once; the next readable round tries again. */
static void read_exits(struct console *c)
{
	int rc = discover_consume(c->disc, on_exit_event, c->s);

	if (rc < 0 && !c->exits_failing)
		report_warning("dynprof: cannot read target exits: %s; trying again", strerror(-rc));
	c->exits_failing = rc < 0;
}

/* The tracker says a failure once per streak and retries by itself. */
static void tick_tracker(struct console *c)
{
	char why[160];

	if (tracker_tick(c->tracker, why, sizeof(why)))
		report_warning("dynprof: %s; trying again", why);
}

/* Triggers, then the --commands script and --control clients, then a quit they asked for. */
static void run_scripts(struct console *c)
{
	if (c->src->triggers)
		triggers_tick(c->src->triggers);
	if (c->src->commands && !c->commands_done) {
		script_step(c->src->commands);
		c->commands_done = script_idle(c->src->commands);
		if (c->commands_done && !(c->src->quit_requested && *c->src->quit_requested))
			input_ended(c);
	}
	if (c->exit_status < 0 && c->src->remote)
		remote_step(c->src->remote);
	/* A client's quit is answered first (it waits for the windows' fates): the run ends after. */
	if (c->exit_status < 0 && c->src->quit_requested && *c->src->quit_requested &&
	    !(c->src->remote && remote_quitting(c->src->remote)))
		quit(c, 0);
	if (c->exit_status < 0 && c->src->triggers && c->mode->fixed_targets &&
	    triggers_exhausted(c->src->triggers)) {
		report_info("every --window rule is done: dynamic profiling ends");
		quit(c, 0);
	}
}

/* ---- the loop's sources, in the order they are run after a poll ---- */

static int one_fd(void *ctx)
{
	(void)ctx;
	return 1;
}

static int fd_or_none(struct pollfd *pfds, int fd)
{
	pfds[0] = (struct pollfd){ .fd = fd, .events = POLLIN };
	return 1;
}

static int signal_fds(void *ctx, struct pollfd *pfds, int max)
{
	(void)max;
	return fd_or_none(pfds, ((struct console *)ctx)->sigfd);
}

/* The run is ending: what else was ready waits for the shutdown. */
static bool signal_event(void *ctx, const struct pollfd *pfd)
{
	(void)pfd;
	on_signal(ctx);
	return true;
}

static int exit_fds(void *ctx, struct pollfd *pfds, int max)
{
	struct console *c = ctx;

	(void)max;
	return fd_or_none(pfds, c->disc ? discover_fd(c->disc) : -1);
}

static bool exit_event(void *ctx, const struct pollfd *pfd)
{
	(void)pfd;
	read_exits(ctx);
	return false;
}

static int tracker_fds(void *ctx, struct pollfd *pfds, int max)
{
	struct console *c = ctx;

	(void)max;
	return fd_or_none(pfds, c->tracker ? tracker_fd(c->tracker) : -1);
}

/* Every round, readable or not: quiet kernel events arrive this way. */
static void tracker_round(void *ctx)
{
	struct console *c = ctx;

	if (c->tracker)
		tick_tracker(c);
}

static int64_t tracker_timeout(void *ctx)
{
	struct console *c = ctx;

	return c->tracker ? tracker_timeout_ms(c->tracker) : -1;
}

static int target_room(void *ctx)
{
	return session_live(((struct console *)ctx)->s);
}

static int target_fds(void *ctx, struct pollfd *pfds, int max)
{
	return session_idle_pollfds(((struct console *)ctx)->s, pfds, max);
}

static bool target_event(void *ctx, const struct pollfd *pfd)
{
	session_idle_event(((struct console *)ctx)->s, pfd);
	return false;
}

/* Wake in time to reconnect before a target's idle limit. */
static int64_t target_timeout(void *ctx)
{
	return session_keepalive_due_ms(((struct console *)ctx)->s);
}

static int depart_room(void *ctx)
{
	return session_depart_room(((struct console *)ctx)->s);
}

static int depart_fds(void *ctx, struct pollfd *pfds, int max)
{
	return session_depart_pollfds(((struct console *)ctx)->s, pfds, max);
}

static bool depart_event(void *ctx, const struct pollfd *pfd)
{
	session_depart_event(((struct console *)ctx)->s, pfd);
	return false;
}

/* Every round: those whose time is up leave. */
static void depart_round(void *ctx)
{
	session_depart_step(((struct console *)ctx)->s);
}

static int64_t depart_timeout(void *ctx)
{
	return session_depart_timeout_ms(((struct console *)ctx)->s);
}

static int flight_room(void *ctx)
{
	return session_flight_room(((struct console *)ctx)->s);
}

static int flight_fds(void *ctx, struct pollfd *pfds, int max)
{
	return session_flight_pollfds(((struct console *)ctx)->s, pfds, max);
}

/* Every round (a ready fd only wakes the loop): replies read, deadlines passed. */
static void flight_round(void *ctx)
{
	session_flight_step(((struct console *)ctx)->s);
}

static int64_t flight_timeout(void *ctx)
{
	return session_flight_timeout_ms(((struct console *)ctx)->s);
}

static int join_room(void *ctx)
{
	return session_join_room(((struct console *)ctx)->s);
}

static int join_fds(void *ctx, struct pollfd *pfds, int max)
{
	return session_join_pollfds(((struct console *)ctx)->s, pfds, max);
}

/* Every round, as the command's: the handshakes of joining targets. */
static void join_round(void *ctx)
{
	session_join_step(((struct console *)ctx)->s);
}

static int64_t join_timeout(void *ctx)
{
	return session_join_timeout_ms(((struct console *)ctx)->s);
}

static int jobs_fds(void *ctx, struct pollfd *pfds, int max)
{
	(void)max;
	return fd_or_none(pfds, session_jobs_fd(((struct console *)ctx)->s));
}

/* A window's collection beside the loop ended: its fate now. */
static bool jobs_event(void *ctx, const struct pollfd *pfd)
{
	(void)pfd;
	session_jobs_event(((struct console *)ctx)->s);
	return false;
}

static int trigger_room(void *ctx)
{
	return ((struct console *)ctx)->src->triggers ? TRIGGER_POLL : 0;
}

static int trigger_fds(void *ctx, struct pollfd *pfds, int max)
{
	return triggers_pollfds(((struct console *)ctx)->src->triggers, pfds, max);
}

static bool trigger_event(void *ctx, const struct pollfd *pfd)
{
	triggers_event(((struct console *)ctx)->src->triggers, pfd);
	return false;
}

static int64_t trigger_timeout(void *ctx)
{
	struct console *c = ctx;

	return c->src->triggers ? triggers_timeout_ms(c->src->triggers) : -1;
}

/* The --commands script polls no fd: its sleeps and waits are timeouts. */
static int64_t script_timeout(void *ctx)
{
	struct console *c = ctx;

	return c->src->commands ? script_timeout_ms(c->src->commands) : -1;
}

static int remote_room(void *ctx)
{
	return ((struct console *)ctx)->src->remote ? CONTROL_MAX_POLLFDS : 0;
}

static int remote_fds(void *ctx, struct pollfd *pfds, int max)
{
	return remote_pollfds(((struct console *)ctx)->src->remote, pfds, max);
}

static bool remote_ready(void *ctx, const struct pollfd *pfd)
{
	remote_event(((struct console *)ctx)->src->remote, pfd);
	return false;
}

static int64_t remote_timeout(void *ctx)
{
	struct console *c = ctx;

	return c->src->remote ? remote_timeout_ms(c->src->remote) : -1;
}

/* Not read while a command's replies or a line wait: what comes after it waits too. */
static int input_fds(void *ctx, struct pollfd *pfds, int max)
{
	struct console *c = ctx;
	bool waiting = waiting_for_replies(c) || memchr(c->line, '\n', c->len);

	(void)max;
	return fd_or_none(pfds, c->input_open && !waiting ? STDIN_FILENO : -1);
}

static bool input_event(void *ctx, const struct pollfd *pfd)
{
	struct console *c = ctx;

	(void)pfd;
	if (session_live(c->s) || !c->mode->fixed_targets)
		on_input(c);
	return false;
}

/* The mode's fd (launch: the application's exit) only wakes the loop; its hooks run after. */
static int mode_fds(void *ctx, struct pollfd *pfds, int max)
{
	struct console *c = ctx;

	(void)max;
	return fd_or_none(pfds, c->mode->wake_fd ? c->mode->wake_fd(c->src->ctx) : -1);
}

static const struct evloop_source console_sources[] = {
	{ .name = "signals", .room = one_fd, .fds = signal_fds, .event = signal_event },
	{ .name = "exits", .room = one_fd, .fds = exit_fds, .event = exit_event },
	{ .name = "tracker", .room = one_fd, .fds = tracker_fds, .round = tracker_round, .timeout_ms = tracker_timeout },
	{ .name = "targets", .room = target_room, .fds = target_fds, .event = target_event, .timeout_ms = target_timeout },
	{ .name = "departures",
	  .room = depart_room,
	  .fds = depart_fds,
	  .event = depart_event,
	  .round = depart_round,
	  .timeout_ms = depart_timeout },
	{ .name = "command", .room = flight_room, .fds = flight_fds, .round = flight_round, .timeout_ms = flight_timeout },
	{ .name = "joins", .room = join_room, .fds = join_fds, .round = join_round, .timeout_ms = join_timeout },
	{ .name = "collections", .room = one_fd, .fds = jobs_fds, .event = jobs_event },
	{ .name = "triggers",
	  .room = trigger_room,
	  .fds = trigger_fds,
	  .event = trigger_event,
	  .timeout_ms = trigger_timeout },
	{ .name = "script", .timeout_ms = script_timeout },
	{ .name = "control", .room = remote_room, .fds = remote_fds, .event = remote_ready, .timeout_ms = remote_timeout },
	{ .name = "input", .room = one_fd, .fds = input_fds, .event = input_event },
	{ .name = "mode", .room = one_fd, .fds = mode_fds },
};

static int add_sources(struct console *c)
{
	for (size_t i = 0; i < ARRAY_SIZE(console_sources); i++) {
		struct evloop_source src = console_sources[i];
		int rc;

		src.ctx = c;
		rc = evloop_add(&c->loop, &src);
		if (rc)
			return rc;
	}
	return 0;
}

/* One round of the loop, then what runs after every round. */
static void poll_once(struct console *c)
{
	int status, rc = evloop_round(&c->loop);

	if (rc == -ENOMEM) { /* a target left unwatched would go unnoticed: end cleanly instead */
		report_error("dynprof: out of memory watching %d targets", session_live(c->s));
		quit(c, 1);
		return;
	}
	if (rc)
		return;
	/* Lines that waited for a command's replies, now they came. */
	if (c->exit_status < 0 && c->len && !waiting_for_replies(c) &&
	    (session_live(c->s) || !c->mode->fixed_targets))
		run_lines(c);
	if (c->exit_status < 0 && c->mode->ended && c->mode->ended(c->src->ctx, &status))
		quit(c, status);
	if (c->exit_status < 0 && c->mode->on_tick)
		c->mode->on_tick(c->src->ctx);
	if (c->exit_status < 0)
		run_scripts(c);
	/* Console, --commands, --control and rules all wait here: no target may idle out. */
	if (c->exit_status < 0)
		session_keepalive(c->s);
}

int console_run(struct session *s, const struct console_sources *src)
{
	struct console c = {
		.s = s,
		.disc = src->disc,
		.tracker = src->tracker,
		.src = src,
		.mode = src->mode,
		.tty = isatty(STDIN_FILENO),
		.input_open = !src->mode->no_input && !src->commands,
		.exit_status = -1,
	};

	c.sigfd = console_signalfd();
	if (c.sigfd < 0) {
		report_error("dynprof: signalfd: %s", strerror(-c.sigfd));
		quit(&c, 1);
		return c.exit_status;
	}
	if (add_sources(&c)) { /* not reached: the table is smaller than the registry */
		report_error("dynprof: too many event sources");
		quit(&c, 1);
		close(c.sigfd);
		return c.exit_status;
	}
	c.started_ms = clock_ms();
	if (src->commands)
		script_set_stats(src->commands, console_stats, &c);
	if (src->remote)
		remote_set_stats(src->remote, console_stats, &c);
	report_info("Start profiling....");
	prompt(&c);
	run_scripts(&c);
	while (c.exit_status < 0) {
		/* The last target gone, its windows' folders brought out: nothing is left to do. */
		if (session_live(s) == 0 && c.mode->fixed_targets && session_jobs_pending(s) == 0) {
			if (late_signal(&c))
				break;
			report_info("no target left: dynamic profiling ends");
			c.exit_status = 1;
			break;
		}
		poll_once(&c);
	}
	/* One that came during the shutdown's STOP and QUIT. */
	while (late_signal(&c))
		;
	/* c lives on this stack: nothing may ask it after the run. */
	if (src->commands)
		script_set_stats(src->commands, NULL, NULL);
	if (src->remote)
		remote_set_stats(src->remote, NULL, NULL);
	evloop_free(&c.loop);
	close(c.sigfd);
	return c.exit_status;
}
