// SPDX-License-Identifier: MIT
/* The collection window shared by all connections (see window.h). */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "agent/log.h"
#include "agent/profdir.h"
#include "agent/window.h"

static pthread_mutex_t window_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dynprof_agent_ops window_ops;
static struct profdir current;
/* Read by the host without the lock: it must never wait on folder writes. */
static atomic_int collecting;

void window_set_ops(const struct dynprof_agent_ops *ops)
{
	pthread_mutex_lock(&window_lock);
	if (ops)
		window_ops = *ops;
	else
		memset(&window_ops, 0, sizeof(window_ops));
	pthread_mutex_unlock(&window_lock);
}

static enum window_start_rc open_locked(int v1_name, const char *params,
				       const struct agent_devset *devs)
{
	int rc = profdir_open(&current, v1_name, params, devs);

	if (rc) {
		agent_log("start: no PROF folder: %s", strerror(-rc));
		return WINDOW_FAILED;
	}
	if (window_ops.on_start && window_ops.on_start(window_ops.ctx, params, current.path)) {
		agent_log("start: on_start refused %s", current.path);
		return WINDOW_FAILED;
	}
	atomic_store(&collecting, 1);
	agent_log("window open: %s", current.path);
	return WINDOW_STARTED;
}

enum window_start_rc window_start(int v1_name, const char *params_json, struct agent_devset *devs)
{
	enum window_start_rc rc;

	pthread_mutex_lock(&window_lock);
	devs->count = 0;
	if (atomic_load(&collecting)) {
		rc = WINDOW_ALREADY;
	} else {
		agent_devices_current(devs);
		rc = devs->count ? open_locked(v1_name, params_json, devs) : WINDOW_NO_DEVICE;
	}
	pthread_mutex_unlock(&window_lock);
	return rc;
}

enum window_stop_rc window_stop(void)
{
	enum window_stop_rc rc = WINDOW_NOT_STARTED;
	int err;

	pthread_mutex_lock(&window_lock);
	if (atomic_load(&collecting)) {
		if (window_ops.on_stop)
			window_ops.on_stop(window_ops.ctx, current.path);
		err = profdir_close(&current);
		/* Closed either way: a window whose end_info failed cannot be resumed. */
		atomic_store(&collecting, 0);
		rc = err ? WINDOW_STOP_FAILED : WINDOW_STOPPED;
		agent_log("window closed: %s%s%s", current.path, err ? ": " : "",
			  err ? strerror(-err) : "");
	}
	pthread_mutex_unlock(&window_lock);
	return rc;
}

int window_collecting(void)
{
	return atomic_load(&collecting);
}

void window_forget_after_fork(void)
{
	/* The child is single-threaded now; a lock held by the parent's server
	 * thread at fork() would otherwise stay held forever. */
	pthread_mutex_init(&window_lock, NULL);
	atomic_store(&collecting, 0);
	memset(&current, 0, sizeof(current));
}
