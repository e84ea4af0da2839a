// SPDX-License-Identifier: MIT
/*
 * The processes `quit SEL` let go (session/session_dismiss.c): known by pid
 * and start time, so follow mode does not take one again, and a later
 * process at a reused pid is not mistaken for it.
 */
#include <signal.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <unistd.h>

#include "session/session_impl.h"
#include "unit.h"

/* quit SEL's memory: the same process (pid and start time), not a later one at its pid. */
TEST(dismissed_processes_are_known_by_pid_and_start_time)
{
	struct session s = { 0 };
	pid_t child = fork();

	REQUIRE(child >= 0);
	if (child == 0) {
		pause();
		_exit(0);
	}
	CHECK(!session_dismissed(&s, getpid()));
	session_remember_dismissed(&s, getpid());
	session_remember_dismissed(&s, child);
	session_remember_dismissed(&s, getpid()); /* once only */
	CHECK_INT(s.ndismissed, 2);
	CHECK(session_dismissed(&s, getpid()));
	CHECK(session_dismissed(&s, child));
	CHECK(!session_dismissed(&s, getppid()));
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	CHECK(!session_dismissed(&s, child));      /* gone: a new process may get its pid */
	session_remember_dismissed(&s, getppid()); /* adding prunes the gone one */
	CHECK_INT(s.ndismissed, 2);
	CHECK(session_dismissed(&s, getppid()));
	session_forget_dismissed(&s);
	CHECK(!session_dismissed(&s, getpid()));
}

UNIT_MAIN()
