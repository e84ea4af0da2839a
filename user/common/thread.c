// SPDX-License-Identifier: MIT
/* Threads with every signal blocked (see thread.h). */
#include <signal.h>

#include "common/thread.h"

int thread_start(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	int rc;

	/* The new thread takes the creator's mask at once: no moment without it. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(th, attr, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}
