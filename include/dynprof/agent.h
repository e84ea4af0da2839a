/* SPDX-License-Identifier: MIT */
/*
 * libdynprof_agent: serves the CANN dynamic-profiling protocol inside any
 * process, so dynprof (or msprof) can open and close collection windows in
 * programs that do not run CANN.
 *
 * Two ways in:
 *  - LD_PRELOAD=libdynprof_agent.so with PROFILING_MODE=dynamic: a
 *    constructor starts the server; the device counts as set once the
 *    process holds an open fd on a card node (DYNPROF_AGENT_DEVICES, a
 *    ':'-separated glob list, replaces the default card patterns).
 *  - linked (libdynprof_agent.a or -ldynprof_agent): call
 *    dynprof_agent_start(), then dynprof_agent_set_device() once the
 *    program has a device.
 *
 * Environment (both ways):
 *  DYNAMIC_PROFILING_KEY_PID  socket key instead of the pid (v2 only, as CANN)
 *  DYNPROF_AGENT_PROTOCOL     v1 or v2 (default v2)
 *  DYNPROF_AGENT_MAX_REQUESTS requests per connection before DISCONNECT (100)
 *  DYNPROF_AGENT_IDLE_TIMEOUT idle seconds before DISCONNECT (1800)
 *  DYNPROF_AGENT_DEVICES      card node globs, ':'-separated
 *  DYNPROF_AGENT_LOG          when set, one line per event on stderr
 *  DYNPROF_AGENT_FLAVOUR      file (default) or abstract: v2 only, listen as
 *                             CANN 8.5.0 / 9.0.0-beta.1 on the abstract name
 *                             \0dyn_prof_sock_<key> (no file; the name belongs
 *                             to the process's network namespace). The key
 *                             rules are the file's; a name already bound
 *                             falls back to the pid (the first process with
 *                             a key keeps it)
 *
 * Each window (START..STOP) becomes PROF_<index>_<time>_<pid8><rand8>
 * under the params' result_dir (created when missing), made at START with
 * host/data/ (left empty: the agent collects nothing it could fake) and,
 * in host/, sample.json, start_info, host_start.log, info.json; STOP adds
 * end_info. Each control file has a <name>.done sidecar "filesize: <N>".
 *
 * The server behaves as CANN's: one client at a time, at most 128 clients
 * per process lifetime, the socket file (mode 0600) removed when the
 * accept loop ends. As CANN 9.x and 8.5.0 (v2), accepted connections are
 * never closed by the server (the client closes; the process keeps its
 * end until shutdown), and a client that connects and sends a short or
 * empty Params (closes without sending) gets Msg{0,1} and ends the accept
 * loop for good: the file is unlinked; an abstract name stays bound with
 * nobody accepting. A client silent for 1 s is left connected, unread. A window outlives the connection that opened it: a
 * client that vanishes leaves it open for the next client's STOP (or for
 * shutdown). A connection the server ends itself (too many requests,
 * idle, shutdown) closes an open window first.
 *
 * v1 detail texts where CANN's are not known: START with no device set
 * fails with "Device is not set.", a START whose folder cannot be made
 * with "Start collection failed.", the 10001st START of the process
 * lifetime with "Start times exceed the limit."; STOP whose end_info
 * cannot be written with "Stop collection failed.". STOP and QUIT
 * successes carry no detail.
 *
 * A bad value in one of the variables above makes the start fail with
 * -EINVAL (logged when DYNPROF_AGENT_LOG is set); a bad
 * DYNAMIC_PROFILING_KEY_PID is ignored, as CANN ignores it.
 */
#ifndef DYNPROF_AGENT_H
#define DYNPROF_AGENT_H

#ifdef __cplusplus
extern "C" {
#endif

struct dynprof_agent_ops {
	/*
	 * A window opened: `params_json` is what the client sent, `prof_dir`
	 * the PROF_ folder just made. Return 0, or non-zero to fail the START
	 * (the folder stays, as CANN leaves it).
	 */
	int (*on_start)(void *ctx, const char *params_json, const char *prof_dir);
	/*
	 * The window is closing; called before end_info is written. Both
	 * callbacks run on the server thread and must not call
	 * dynprof_agent_shutdown (it cannot join its own thread: it returns
	 * without doing anything there).
	 */
	void (*on_stop)(void *ctx, const char *prof_dir);
	void *ctx;
};

/*
 * Start the server thread, whatever PROFILING_MODE says (the preload
 * constructor is what checks it). `ops` may be NULL. Returns 0, -EALREADY when a
 * server runs already, or a negative errno (no home, bind failed, ...).
 */
int dynprof_agent_start(const struct dynprof_agent_ops *ops);

/*
 * The process now has device `device_id` (0..1023; others are ignored):
 * STARTs may succeed. Ids accumulate. Lock-free, callable before start.
 */
void dynprof_agent_set_device(int device_id);

/* 1 while a window is open, else 0. */
int dynprof_agent_collecting(void);

/*
 * The socket path the server listens on ("@dyn_prof_sock_<key>" for the
 * abstract flavour), or NULL when it does not run
 * (also after its 128th client, when CANN's server stops listening too).
 */
const char *dynprof_agent_socket_path(void);

/*
 * Stop the server: a connected client gets DISCONNECT (v2: Msg{7,0} then
 * Msg{6,0}; v1: DISCONN_RSP "Server process exit."), an open window is
 * stopped (its folder completed), the socket file is removed, the thread
 * joined. Also run at exit (atexit), in the process that started the
 * server only: a fork()ed child never acts for its parent's server.
 * Waits at most a few seconds (every socket write has a 1 s deadline).
 */
void dynprof_agent_shutdown(void);

#ifdef __cplusplus
}
#endif

#endif /* DYNPROF_AGENT_H */
