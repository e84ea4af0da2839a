// SPDX-License-Identifier: MIT
/*
 * Launch mode's slot reuse (session/session_connect.c session_new_slot,
 * session/session.c session_target_release): a target that left gives its
 * slot to a later join once it is dropped and every layer that keys state
 * by slot (the trigger engine, session_hold_slots) let it go. The trigger
 * engine lets a target go as soon as it is no longer live, which for one
 * whose connection ended is while it departs (waiting for its exit), before
 * it is dropped: that release must still count once the drop comes, or the
 * slot is never reused and the table grows by a target per job.
 */
#include <stdlib.h>

#include "session/session_impl.h"
#include "unit.h"

/* A session of one slot, held by one layer above, its target departing. */
static void one_departing(struct session *s)
{
	struct target *t = malloc(sizeof(*t));

	REQUIRE(t);
	*s = (struct session){ .targets = malloc(sizeof(*s->targets)), .slots = 1, .ntargets = 1 };
	REQUIRE(s->targets);
	*t = (struct target){ .fd = -1, .ep_fd = -1, .result_fd = -1, .departing = true };
	s->targets[0] = t;
	s->slot_holders = 1;
}

static void free_all(struct session *s)
{
	for (int i = 0; i < s->ntargets; i++)
		free(s->targets[i]);
	free(s->targets);
}

TEST(a_slot_let_go_while_its_target_departs_is_reused_once_it_is_dropped)
{
	struct session s;
	struct target *old, *t;

	one_departing(&s);
	old = s.targets[0];
	session_target_release(&s, 0); /* the trigger engine: no longer live */
	old->departing = false;
	old->dropped = true; /* then its exit */
	t = session_new_slot(&s, true);
	CHECK(t == old);
	CHECK_INT(s.ntargets, 1);
	free_all(&s);
}

TEST(a_dropped_target_that_a_layer_above_still_holds_keeps_its_slot)
{
	struct session s;
	struct target *old, *t;

	one_departing(&s);
	old = s.targets[0];
	old->departing = false;
	old->dropped = true; /* never let go above */
	t = session_new_slot(&s, true);
	CHECK(t != old);
	CHECK_INT(s.ntargets, 2);
	free_all(&s);
}

UNIT_MAIN()
