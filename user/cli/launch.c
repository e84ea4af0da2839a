// SPDX-License-Identifier: MIT
/* Starting and waiting for launch mode's application (see launch.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/fdlimit.h"
#include "dynprof/proto.h"
#include "cli/launch.h"
#include "shared/cards.h"

/* In the child: undo what dynprof set up for itself, then exec. */
static void exec_child(char *const argv[], bool msprof_key, bool keep_stdin, const char *devices,
		       pid_t dynprof)
{
	sigset_t all;
	char key[16];
	int null = keep_stdin ? -1 : open("/dev/null", O_RDONLY);

	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	signal(SIGPIPE, SIG_DFL);
	setpgid(0, 0);
	fdlimit_restore(); /* the application's own limit, not the one raised for dynprof */
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		close(null);
	}
	setenv(DYNPROF_MODE_ENV, DYNPROF_MODE_DYNAMIC, 1);
	if (msprof_key) {
		snprintf(key, sizeof(key), "%d", (int)dynprof);
		setenv(DYNPROF_KEY_ENV, key, 1);
	} else {
		unsetenv(DYNPROF_KEY_ENV);
	}
	/* The agent's cards are dynprof's: a START needs both to agree (a variable set by hand wins). */
	if (devices)
		setenv(CARDS_PATTERNS_ENV, devices, 0);
	execvp(argv[0], argv);
	fprintf(stdout, "[ERROR] dynprof: cannot run the application %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

int launch_start(struct launch *l, char *const argv[], bool msprof_key, bool keep_stdin, const char *devices)
{
	pid_t self = getpid();

	memset(l, 0, sizeof(*l));
	l->pidfd = -1;
	fflush(stdout);
	l->pid = fork();
	if (l->pid < 0)
		return -errno;
	if (l->pid == 0)
		exec_child(argv, msprof_key, keep_stdin, devices, self);
	setpgid(l->pid, l->pid); /* also here: no race with signals sent early */
	l->pidfd = (int)syscall(SYS_pidfd_open, l->pid, 0);
	return 0;
}

int launch_poll(struct launch *l)
{
	if (!l->reaped && waitpid(l->pid, &l->status, WNOHANG) == l->pid)
		l->reaped = true;
	return l->reaped;
}

void launch_wait(struct launch *l)
{
	while (!l->reaped) {
		if (waitpid(l->pid, &l->status, 0) == l->pid)
			l->reaped = true;
		else if (errno != EINTR)
			break;
	}
}

void launch_signal(const struct launch *l, int sig)
{
	if (!l->reaped)
		kill(-l->pid, sig);
}

int launch_exit_status(const struct launch *l)
{
	if (!l->reaped)
		return 1;
	if (WIFEXITED(l->status))
		return WEXITSTATUS(l->status);
	if (WIFSIGNALED(l->status))
		return 128 + WTERMSIG(l->status);
	return 1;
}

void launch_close(struct launch *l)
{
	if (l->pidfd >= 0)
		close(l->pidfd);
	l->pidfd = -1;
}
