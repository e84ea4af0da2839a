/* SPDX-License-Identifier: MIT */
/*
 * Which device nodes are accelerator cards, and which card index they carry.
 *
 * A pattern is a shell glob on the node's path (fnmatch, '/' matched only
 * literally). A node is a card when its path matches a pattern AND its name
 * ends in a number: that number is the card index. So the default
 * "/dev/davinci*" takes /dev/davinci3 (card 3) but not /dev/davinci_manager,
 * and "/dev/nvidia*" takes /dev/nvidia0 but not /dev/nvidiactl.
 */
#ifndef DYNPROF_CARDS_H
#define DYNPROF_CARDS_H

#include <stdbool.h>
#include <stddef.h>

#include "shared/compiler.h"

#define CARDS_MAX_PATTERNS 16

/* Environment variable with ':'-separated patterns replacing the defaults. */
#define CARDS_PATTERNS_ENV "DYNPROF_AGENT_DEVICES"

struct card_patterns {
	int count;
	char *glob[CARDS_MAX_PATTERNS];
	char *storage; /* owns the strings when parsed from a list */
};

/* The default patterns: Ascend, NVIDIA, Linux accel, DRM render nodes. */
void cards_default_patterns(struct card_patterns *p);

/* Parse a ':'-separated list; 0 or -EINVAL (empty, or too many). */
int cards_parse_patterns(struct card_patterns *p, const char *list) DP_MUST_CHECK;

void cards_free_patterns(struct card_patterns *p);

/* The card index of `path` when it is a card under `p`, else -1. */
int cards_match(const struct card_patterns *p, const char *path);

/* A set of card indexes (bit N = card N) as text: "0,3"; "" when empty. */
void cards_mask_text(unsigned long long mask, char *buf, size_t len);

/* The lowest card index among the process's open fds, or -1 (none). */
int cards_held_by_pid(const struct card_patterns *p, int pid);

/*
 * A node named as the default patterns name cards (davinci*, nvidia*, ...)
 * wherever it is: what a user may have meant as a card, for the hint that
 * names the --device to add.
 */
bool cards_named_like_one(const char *path);

#endif /* DYNPROF_CARDS_H */
