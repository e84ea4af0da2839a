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
 *
 * Each window (START..STOP) becomes PROF_<index>_<time>_<pid8><rand8>
 * under the params' result_dir, with host/, sample.json, start_info,
 * end_info, host_start.log and info.json, as CANN lays them out.
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
	/* The window is closing; called before end_info is written. */
	void (*on_stop)(void *ctx, const char *prof_dir);
	void *ctx;
};

/*
 * Start the server thread. `ops` may be NULL. Returns 0, -EALREADY when a
 * server runs already, or a negative errno (no home, bind failed, ...).
 */
int dynprof_agent_start(const struct dynprof_agent_ops *ops);

/* The process now has device `device_id` (>= 0): STARTs may succeed. */
void dynprof_agent_set_device(int device_id);

/* 1 while a window is open, else 0. */
int dynprof_agent_collecting(void);

/* The socket path the server listens on, or NULL when it does not run. */
const char *dynprof_agent_socket_path(void);

/*
 * Stop the server: an open window is stopped (its folder completed), a
 * connected client gets DISCONNECT, the socket file is removed. Also run
 * at exit.
 */
void dynprof_agent_shutdown(void);

#ifdef __cplusplus
}
#endif

#endif /* DYNPROF_AGENT_H */
