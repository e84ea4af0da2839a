// SPDX-License-Identifier: MIT
/* Signals and files that trigger conditions watch (see trigger_inputs.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/clock.h"
#include "trigger/trigger_inputs.h"

struct trigger_file {
	char *path;
	bool present;
	uint64_t appeared; /* times it went from absent to present (present at start: 1) */
};

struct trigger_inputs {
	sigset_t sigs; /* the signals conditions name */
	int sigfd;     /* -1 when none */
	uint64_t sig_count[_NSIG];
	struct trigger_file files[TRIGGER_MAX_FILES];
	int nfiles;
	int64_t files_checked_ms;
};

struct trigger_inputs *trigger_inputs_new(void)
{
	struct trigger_inputs *in = calloc(1, sizeof(*in));

	if (!in)
		return NULL;
	sigemptyset(&in->sigs);
	in->sigfd = -1;
	return in;
}

int trigger_inputs_fd(const struct trigger_inputs *in)
{
	return in->sigfd;
}

bool trigger_inputs_watches_signal(const struct trigger_inputs *in, int signo)
{
	return sigismember(&in->sigs, signo) == 1;
}

uint64_t trigger_inputs_sig_count(const struct trigger_inputs *in, int signo)
{
	return signo > 0 && signo < _NSIG ? in->sig_count[signo] : 0;
}

void trigger_inputs_add_signal(struct trigger_inputs *in, int signo)
{
	sigaddset(&in->sigs, signo);
}

static struct trigger_file *find_file(const struct trigger_inputs *in, const char *path)
{
	for (int i = 0; i < in->nfiles; i++)
		if (!strcmp(in->files[i].path, path))
			return (struct trigger_file *)&in->files[i];
	return NULL;
}

static bool exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

int trigger_inputs_add_file(struct trigger_inputs *in, const char *path)
{
	struct trigger_file *f;

	if (find_file(in, path))
		return 0;
	if (in->nfiles == TRIGGER_MAX_FILES)
		return -1;
	f = &in->files[in->nfiles];
	f->path = strdup(path);
	if (!f->path)
		return -1;
	in->nfiles++;
	/* A file already there when the run begins counts as having appeared. */
	f->present = exists(path);
	f->appeared = f->present;
	return 0;
}

int trigger_inputs_add_signal_live(struct trigger_inputs *in, int signo)
{
	sigset_t one;
	int fd;

	if (trigger_inputs_watches_signal(in, signo))
		return 0;
	sigemptyset(&one);
	sigaddset(&one, signo);
	if (sigprocmask(SIG_BLOCK, &one, NULL))
		return -errno;
	sigaddset(&in->sigs, signo);
	/* The same fd takes the wider mask: nothing counted so far is lost. */
	fd = signalfd(in->sigfd, &in->sigs, SFD_CLOEXEC | SFD_NONBLOCK);
	if (fd < 0) {
		sigdelset(&in->sigs, signo);
		return -errno;
	}
	in->sigfd = fd;
	return 0;
}

int trigger_inputs_start(struct trigger_inputs *in)
{
	if (sigisemptyset(&in->sigs))
		return 0;
	if (sigprocmask(SIG_BLOCK, &in->sigs, NULL))
		return -errno;
	in->sigfd = signalfd(-1, &in->sigs, SFD_CLOEXEC | SFD_NONBLOCK);
	return in->sigfd < 0 ? -errno : 0;
}

void trigger_inputs_close(struct trigger_inputs *in)
{
	if (!in)
		return;
	if (in->sigfd >= 0)
		close(in->sigfd);
	for (int i = 0; i < in->nfiles; i++)
		free(in->files[i].path);
	free(in);
}

void trigger_inputs_read_signals(struct trigger_inputs *in)
{
	struct signalfd_siginfo si;

	while (in->sigfd >= 0 && read(in->sigfd, &si, sizeof(si)) == sizeof(si))
		if (si.ssi_signo < _NSIG)
			in->sig_count[si.ssi_signo]++;
}

void trigger_inputs_check_files(struct trigger_inputs *in)
{
	int64_t now = clock_ms();

	if (!in->nfiles || now - in->files_checked_ms < TRIGGER_FILE_POLL_MS)
		return;
	in->files_checked_ms = now;
	for (int i = 0; i < in->nfiles; i++) {
		bool present = exists(in->files[i].path);

		in->files[i].appeared += present && !in->files[i].present;
		in->files[i].present = present;
	}
}

int trigger_inputs_timeout_ms(const struct trigger_inputs *in)
{
	int64_t left;

	if (!in->nfiles)
		return -1;
	left = in->files_checked_ms + TRIGGER_FILE_POLL_MS - clock_ms();
	return left < 0 ? 0 : (int)left;
}

uint64_t trigger_inputs_file_count(const struct trigger_inputs *in, const char *path)
{
	const struct trigger_file *f = find_file(in, path);

	return f ? f->appeared : 0;
}

bool trigger_inputs_file_present(const struct trigger_inputs *in, const char *path)
{
	const struct trigger_file *f = find_file(in, path);

	return f && f->present;
}
