/* SPDX-License-Identifier: MIT */
/*
 * The card nodes that exist, by device number: the patterns globbed, each
 * match stat()ed, character devices kept with the card index of their name.
 *
 * A process's fd is a card when its path (as /proc/<pid>/fd shows it)
 * matches a pattern, or when the node it opened has the device number of
 * a registered card: that catches a node opened through any other name,
 * such as one made with mknod inside a container (docker --device makes
 * exactly that, possibly under another name: --device=/dev/davinci3:/dev/davinci0).
 * The registered index wins over the name: it is the card's index on the
 * host, where dynprof runs and where npu-smi counts cards.
 */
#ifndef DYNPROF_CARDDEVS_H
#define DYNPROF_CARDDEVS_H

#include <sys/types.h>

#include "shared/cards.h"
#include "dynprof/events.h"
#include "shared/compiler.h"

struct card_dev_entry {
	unsigned major, minor;
	int index;
};

struct card_devs {
	int count;
	struct card_dev_entry devs[DP_MAX_CARD_DEVS];
};

/*
 * Glob every pattern (glob(3), sorted, no error on no match) and register
 * each character device whose name carries an index (cards_match). A
 * device number met twice keeps its first name's index. 0 or -ENOMEM.
 */
int carddevs_glob(struct card_devs *d, const struct card_patterns *p) DP_MUST_CHECK;

/* The index registered for device number `rdev`, or -1. */
int carddevs_lookup(const struct card_devs *d, dev_t rdev);

/*
 * The card index of an open file: `target` is its /proc/<pid>/fd link
 * text; `fddir`/`name` the fd entry, stat()ed (following the link) only
 * when cards are registered and the target is a path. -1: not a card.
 */
int carddevs_fd_index(const struct card_devs *d, const struct card_patterns *p, int fddir,
		      const char *name, const char *target);

#endif /* DYNPROF_CARDDEVS_H */
