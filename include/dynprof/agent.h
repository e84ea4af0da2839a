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
 *  DYNAMIC_PROFILING_KEY_PID  socket key instead of the pid (v2 only, as CANN
 *                             9.x reads it: an integer in int32, the whole
 *                             text, else no server starts; empty or <= 0: the
 *                             pid; > 0: the raw text names the socket, so
 *                             "0777" gives dynamic_profiling_socket_0777)
 *  DYNPROF_AGENT_PROTOCOL     v1 or v2 (default v2)
 *  DYNPROF_AGENT_FLAVOUR      file (default: CANN 9.x) or abstract (v2 only:
 *                             CANN 8.5.0, \0dyn_prof_sock_<key>)
 *  DYNPROF_AGENT_MAX_REQUESTS requests answered per connection, then
 *                             DISCONNECT (101; v1's TEST counts among them)
 *  DYNPROF_AGENT_IDLE_TIMEOUT 1-s idle ticks per connection, then DISCONNECT
 *                             at the next (1800)
 *  DYNPROF_AGENT_DEVICES      card node globs, ':'-separated
 *  DYNPROF_AGENT_LOG          when set, one line per event on stderr
 *  DYNPROF_AGENT_ORPHAN_GRACE seconds an 8.5.0-flavour window whose client
 *                             vanished stays open for a later client, then
 *                             the agent stops it (60; 0: never, as CANN 8.5.0)
 *  DYNPROF_AGENT_CHIP         the platform_version info.json names (5, the
 *                             Ascend 910B; one of msprof's 0-5, 7, 8, 9, 11,
 *                             15, 16: its export stops on any other)
 * dynprof reads the two limits from the target's environment and follows them.
 *
 * Each window (START..STOP) becomes PROF_<index>_<time>_<pid8><rand8>
 * (v1: PROF_<index>_<time>_<16 letters>, no pid, as CANN's v1) under the
 * params' result_dir (created when missing), made at START with host/data/
 * (left empty: the agent collects nothing it could fake) and, in host/,
 * sample.json, start_info, host_start.log, info.json; STOP adds end_info.
 * Each control file has a <name>.done sidecar "filesize: <N>".
 *
 * The server behaves as CANN's (docs/PROTOCOL.md Part 2): one client at a time,
 * at most 128 clients per process lifetime (8.5.0: no cap), the socket file
 * (mode 0600) removed when the accept loop ends. Per connection:
 *  - 9.x (default): 101 START/STOP answered (QUIT not counted), idle ticks
 *    (1-s waits with no window open) counted over the whole connection,
 *    never reset. The limits, an unknown request type, a failed read (the
 *    client died: EOF) and the process's exit all end the connection with
 *    DISCONNECT Msg{7,0}, then QUIT handling: an open window is stopped
 *    and finalised, Msg{6,0} (6,1 when that failed).
 *  - 8.5.0 (DYNPROF_AGENT_FLAVOUR=abstract): no limits, no DISCONNECT; a
 *    window outlives its client (a later client's STOP ends it); an unknown
 *    type or the exit end the connection without a word. Unlike CANN 8.5.0,
 *    a window whose client vanished (EOF mid-window) is stopped after
 *    DYNPROF_AGENT_ORPHAN_GRACE seconds with no client connected, and
 *    host/dynprof_orphaned.txt in its folder says when and why; the next
 *    client is told in the log ("told: ..."), since v2 replies carry no
 *    text. A client that connects in time can stop it (the wait ends; it
 *    starts again if that client vanishes too).
 *  - v1: 101 requests including TEST_REQ; the idle count restarts at every
 *    START_REQ. Every end the server chooses is DISCONN_RSP with CANN's
 *    text ("Receive too much requests from client.", "Idle link too long
 *    time.", "Internal error." for an unknown type, a malformed request or a
 *    failed read, "Dynamic profiling Server exit" at exit), then QUIT_RSP;
 *    a client's QUIT gets QUIT_RSP, DISCONN_RSP "Client request quit.",
 *    QUIT_RSP. A client that dies has its window finalised (CANN's v1
 *    spins on a stale errno instead; not copied).
 *
 * v1 detail texts are CANN's: START "Started device Id: 0 1 " (each id
 * followed by a blank), "Collection has been started.", "Start times over
 * max limit." (the 10002nd START of the process lifetime), "Started device
 * Id: " with a failure when no device is set, "Internal error." when the
 * folder cannot be made or on_start refuses; STOP "Collection is not
 * started.", "Internal error." when end_info cannot be written. STOP and
 * QUIT successes carry no detail.
 *
 * A bad value in one of the variables above makes the start fail with
 * -EINVAL (logged when DYNPROF_AGENT_LOG is set), as a bad
 * DYNAMIC_PROFILING_KEY_PID keeps CANN's server from starting.
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
 * Stop the server: a connected client gets DISCONNECT (9.x: Msg{7,0} then
 * Msg{6,0}; v1: DISCONN_RSP "Dynamic profiling Server exit" then QUIT_RSP;
 * 8.5.0: nothing, the connection closes), an open window is stopped (its
 * folder completed), the socket file is removed, the thread joined. Also run at exit (atexit), in the process that started the
 * server only: a fork()ed child never acts for its parent's server.
 * Waits at most a few seconds (every socket write has a 1 s deadline).
 */
void dynprof_agent_shutdown(void);

#ifdef __cplusplus
}
#endif

#endif /* DYNPROF_AGENT_H */
