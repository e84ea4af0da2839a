/* SPDX-License-Identifier: MIT */
/*
 * Threads of dynprof's own. Every signal is blocked on them from their
 * first instruction: the loop's signalfd reads dynprof's signals, and a
 * process-directed signal goes to any thread that does not block it. A
 * thread that inherited the loop's mask is not enough: a signal rule
 * added while dynprof runs (`window start=signal:USR1`) blocks its signal
 * on the loop's thread only, and a USR1 delivered to an older thread took
 * its default action, ending dynprof.
 */
#ifndef DYNPROF_THREAD_H
#define DYNPROF_THREAD_H

#include <pthread.h>

#include "shared/compiler.h"

/* pthread_create with every signal blocked on the new thread; its result. */
int thread_start(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg) DP_MUST_CHECK;

#endif /* DYNPROF_THREAD_H */
