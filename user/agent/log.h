/* SPDX-License-Identifier: MIT */
/*
 * Event log: one line per event on stderr when DYNPROF_AGENT_LOG is set,
 * nothing otherwise (the agent lives inside someone else's program).
 */
#ifndef DYNPROF_AGENT_LOG_H
#define DYNPROF_AGENT_LOG_H

void agent_log_enable(int on);

/* "dynprof-agent[<pid>]: <text>\n", written with one write(2). */
void agent_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* DYNPROF_AGENT_LOG_H */
