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

#include "shared/clock.h"
#include "cli/console.h"
#include "control/remote.h"
#include "control/script.h"
#include "trigger/triggers.h"
#include "model/tracker.h"
#include "model/procmodel.h"
#include "report/report.h"

#define LINE_MAX_LEN 4096
#define FIXED_POLL 5   /* signals, stdin, exits, the tracker, the mode's fd */
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
	int exit_status;     /* -1 while running */
	bool commands_done;  /* the --commands script has run to its end */
	bool exits_failing;  /* reading target exits failed last round (said once) */
	struct pollfd *pfds; /* room for every fd polled: grows with the targets */
	size_t npfds;
	int64_t started_ms; /* when the console began (status's uptime) */
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

static void run_command(struct console *c, char *raw)
{
	char *cmd = trim(raw);

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

	while (c->exit_status < 0 && (nl = memchr(c->line, '\n', c->len))) {
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

/* The poll timeout: the tracker's, a trigger's, a script's sleep or wait, whichever is first. */
static int poll_timeout(const struct console *c)
{
	int ms = c->tracker ? tracker_timeout_ms(c->tracker) : -1;

	/* Wake in time to reconnect before a target's idle limit. */
	ms = (int)clock_sooner(ms, session_keepalive_due_ms(c->s));

	if (c->src->triggers)
		ms = (int)clock_sooner(ms, triggers_timeout_ms(c->src->triggers));
	if (c->src->commands)
		ms = (int)clock_sooner(ms, script_timeout_ms(c->src->commands));
	if (c->src->remote)
		ms = (int)clock_sooner(ms, remote_timeout_ms(c->src->remote));
	return ms;
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
	if (c->exit_status < 0 && c->src->quit_requested && *c->src->quit_requested)
		quit(c, 0);
	if (c->exit_status < 0 && c->src->triggers && c->mode->fixed_targets &&
	    triggers_exhausted(c->src->triggers)) {
		report_info("every --window rule is done: dynamic profiling ends");
		quit(c, 0);
	}
}

/* Room for this round's pollfds: one per live target, and the rest. NULL: out of memory. */
static struct pollfd *poll_room(struct console *c, int *max)
{
	size_t need = FIXED_POLL + (size_t)session_live(c->s) + TRIGGER_POLL + CONTROL_MAX_POLLFDS;

	if (need > c->npfds) {
		struct pollfd *grown = realloc(c->pfds, 2 * need * sizeof(*grown));

		if (!grown)
			return NULL;
		c->pfds = grown;
		c->npfds = 2 * need;
	}
	*max = (int)c->npfds;
	return c->pfds;
}

/* One poll round over stdin, the signal fd, the exit watcher, the tracker,
 * the mode's fd and the targets. */
static void poll_once(struct console *c)
{
	int n = 0, fixed, first_extra, first_remote, max, status;
	struct pollfd *pfds = poll_room(c, &max);

	if (!pfds) { /* a target left unwatched would go unnoticed: end cleanly instead */
		report_error("dynprof: out of memory watching %d targets", session_live(c->s));
		quit(c, 1);
		return;
	}

	pfds[n++] = (struct pollfd){ .fd = c->sigfd, .events = POLLIN };
	pfds[n++] = (struct pollfd){ .fd = c->input_open ? STDIN_FILENO : -1, .events = POLLIN };
	pfds[n++] = (struct pollfd){ .fd = c->disc ? discover_fd(c->disc) : -1, .events = POLLIN };
	pfds[n++] = (struct pollfd){ .fd = c->tracker ? tracker_fd(c->tracker) : -1, .events = POLLIN };
	pfds[n++] = (struct pollfd){ .fd = c->mode->wake_fd ? c->mode->wake_fd(c->src->ctx) : -1,
				     .events = POLLIN };
	fixed = n;
	n += session_idle_pollfds(c->s, pfds + n, max - n);
	first_extra = n;
	if (c->src->triggers)
		n += triggers_pollfds(c->src->triggers, pfds + n, max - n);
	first_remote = n;
	if (c->src->remote)
		n += remote_pollfds(c->src->remote, pfds + n, max - n);
	if (poll(pfds, (nfds_t)n, poll_timeout(c)) < 0)
		return;
	if (pfds[0].revents) {
		on_signal(c);
		return;
	}
	if (pfds[2].revents)
		read_exits(c);
	/* Every round, readable or not: quiet kernel events arrive this way. */
	if (c->tracker)
		tick_tracker(c);
	for (int i = fixed; i < first_extra; i++)
		if (pfds[i].revents)
			session_idle_event(c->s, &pfds[i]);
	for (int i = first_extra; i < first_remote; i++)
		if (pfds[i].revents)
			triggers_event(c->src->triggers, &pfds[i]);
	for (int i = first_remote; i < n; i++)
		if (pfds[i].revents)
			remote_event(c->src->remote, &pfds[i]);
	if (pfds[1].revents && (session_live(c->s) || !c->mode->fixed_targets))
		on_input(c);
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
	c.started_ms = clock_ms();
	if (src->commands)
		script_set_stats(src->commands, console_stats, &c);
	if (src->remote)
		remote_set_stats(src->remote, console_stats, &c);
	report_info("Start profiling....");
	prompt(&c);
	run_scripts(&c);
	while (c.exit_status < 0) {
		if (session_live(s) == 0 && c.mode->fixed_targets) {
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
	free(c.pfds);
	close(c.sigfd);
	return c.exit_status;
}
