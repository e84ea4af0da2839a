/* SPDX-License-Identifier: MIT */
/*
 * What trigger conditions watch outside the targets: signals sent to
 * dynprof (signal:NAME) and files appearing (file:PATH). Each is a counter
 * of occurrences since the run began; a condition remembers the counter
 * when it began waiting and fires when it has grown (an edge, so a
 * repeated window needs a new signal, or the file removed and made again).
 */
#ifndef DYNPROF_TRIGGER_INPUTS_H
#define DYNPROF_TRIGGER_INPUTS_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "shared/compiler.h"

#define TRIGGER_MAX_FILES 32
#define TRIGGER_FILE_POLL_MS 20 /* how often watched paths are checked */

struct trigger_inputs; /* owned by trigger_inputs.c */

/* NULL: out of memory. */
struct trigger_inputs *trigger_inputs_new(void);
/* Watch a signal / a path (duplicates are merged). 0 or -1 (too many paths). */
void trigger_inputs_add_signal(struct trigger_inputs *in, int signo);
int trigger_inputs_add_file(struct trigger_inputs *in, const char *path) DP_MUST_CHECK;
/* While running: watch one more signal (blocked, in the signalfd from now). 0 or -errno. */
int trigger_inputs_add_signal_live(struct trigger_inputs *in, int signo) DP_MUST_CHECK;
/* Block the signals and open their signalfd. 0 or -errno. */
int trigger_inputs_start(struct trigger_inputs *in) DP_MUST_CHECK;
/* Close and free (NULL: nothing). */
void trigger_inputs_close(struct trigger_inputs *in);
/* The signalfd to poll; -1 when no signal is watched (or before the start). */
int trigger_inputs_fd(const struct trigger_inputs *in);
bool trigger_inputs_watches_signal(const struct trigger_inputs *in, int signo);
/* Times `signo` arrived since the start. */
uint64_t trigger_inputs_sig_count(const struct trigger_inputs *in, int signo);

/* The signalfd fired: count what arrived. */
void trigger_inputs_read_signals(struct trigger_inputs *in);
/* Check the paths when TRIGGER_FILE_POLL_MS passed since the last check. */
void trigger_inputs_check_files(struct trigger_inputs *in);
/* ms until the next file check is due (-1: no paths). */
int trigger_inputs_timeout_ms(const struct trigger_inputs *in);

uint64_t trigger_inputs_file_count(const struct trigger_inputs *in, const char *path);
bool trigger_inputs_file_present(const struct trigger_inputs *in, const char *path);

#endif /* DYNPROF_TRIGGER_INPUTS_H */
