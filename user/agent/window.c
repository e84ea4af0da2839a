// SPDX-License-Identifier: MIT
/* The collection window shared by all connections (see window.h). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "agent/config.h"
#include "agent/log.h"
#include "agent/profdir.h"
#include "agent/window.h"
#include "shared/clock.h"

static pthread_mutex_t window_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dynprof_agent_ops window_ops;
static struct profdir current;
static int window_chip; /* under the lock */
/* Read by the host without the lock: it must never wait on folder writes. */
static atomic_int collecting;
/* The window's client vanished (8.5.0 flavour): since when; -1: it has one. Server thread and lock. */
static int64_t orphan_since_ms = -1;
static time_t orphan_since_wall;
/* The note of a window the agent stopped, for the next client's log line ("" once told). */
static char last_note[PATH_MAX + 32];

void window_set_ops(const struct dynprof_agent_ops *ops, int chip)
{
	pthread_mutex_lock(&window_lock);
	window_chip = chip;
	if (ops)
		window_ops = *ops;
	else
		memset(&window_ops, 0, sizeof(window_ops));
	pthread_mutex_unlock(&window_lock);
}

static enum window_start_rc open_locked(int v1_name, const char *params)
{
	int rc = profdir_open(&current, v1_name, params, window_chip);

	if (rc) {
		agent_log("start: no PROF folder: %s", strerror(-rc));
		return WINDOW_FAILED;
	}
	if (window_ops.on_start && window_ops.on_start(window_ops.ctx, params, current.host.path)) {
		agent_log("start: on_start refused %s", current.host.path);
		return WINDOW_FAILED;
	}
	atomic_store(&collecting, 1);
	agent_log("window open: %s", current.host.path);
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
		rc = devs->count ? open_locked(v1_name, params_json) : WINDOW_NO_DEVICE;
	}
	pthread_mutex_unlock(&window_lock);
	return rc;
}

/* `note`: why the agent itself stops it, written before end_info (NULL: a client asked). */
static enum window_stop_rc stop_locked(const char *note)
{
	int err;

	if (!atomic_load(&collecting))
		return WINDOW_NOT_STARTED;
	if (note && profdir_note(&current, PROFDIR_ORPHAN_NOTE, note))
		agent_log("cannot write %s/host/%s", current.host.path, PROFDIR_ORPHAN_NOTE);
	if (window_ops.on_stop)
		window_ops.on_stop(window_ops.ctx, current.host.path);
	err = profdir_close(&current);
	/* Closed either way: a window whose end_info failed cannot be resumed. */
	atomic_store(&collecting, 0);
	agent_log("window closed: %s%s%s", current.host.path, err ? ": " : "", err ? strerror(-err) : "");
	return err ? WINDOW_STOP_FAILED : WINDOW_STOPPED;
}

enum window_stop_rc window_stop(void)
{
	enum window_stop_rc rc;

	pthread_mutex_lock(&window_lock);
	rc = stop_locked(NULL);
	orphan_since_ms = -1;
	pthread_mutex_unlock(&window_lock);
	return rc;
}

void window_orphan(int grace_sec)
{
	if (!atomic_load(&collecting))
		return;
	orphan_since_ms = clock_ms();
	orphan_since_wall = time(NULL);
	if (grace_sec)
		agent_log("window of a vanished client left open (as CANN 8.5.0): stopped in %d s unless a client stops it (%s)",
			  grace_sec, AGENT_ORPHAN_GRACE_ENV);
	else
		agent_log("window of a vanished client left open (as CANN 8.5.0), for good (%s=0)",
			  AGENT_ORPHAN_GRACE_ENV);
}

void window_client_connected(void)
{
	if (orphan_since_ms >= 0 && atomic_load(&collecting))
		agent_log("told: the window of a client that vanished %lld s ago is still open: %s",
			  (long long)((clock_ms() - orphan_since_ms) / 1000), current.host.path);
	else if (last_note[0])
		agent_log("told: the agent stopped the window of a vanished client: see %s", last_note);
	last_note[0] = '\0';
	orphan_since_ms = -1; /* this client can stop it; if it vanishes too, the wait starts again */
}

int64_t window_orphan_due_ms(int grace_sec)
{
	int64_t left;

	if (orphan_since_ms < 0 || !grace_sec || !atomic_load(&collecting))
		return -1;
	left = orphan_since_ms + (int64_t)grace_sec * 1000 - clock_ms();
	return left > 0 ? left : 0;
}

/* "2026-12-01T14:05:30Z" */
static void utc_text(time_t t, char *buf, size_t len)
{
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, len, "%lld", (long long)t);
}

void window_stop_orphan(int grace_sec)
{
	char since[32], now[32], note[256 + PATH_MAX];

	pthread_mutex_lock(&window_lock);
	if (orphan_since_ms >= 0 && atomic_load(&collecting)) {
		utc_text(orphan_since_wall, since, sizeof(since));
		utc_text(time(NULL), now, sizeof(now));
		snprintf(note, sizeof(note),
			 "stopped by dynprof's agent at %s: the client that opened this window vanished while it was collecting at %s, and no client stopped it within %d s (%s)\n",
			 now, since, grace_sec, AGENT_ORPHAN_GRACE_ENV);
		agent_log("no client stopped the window of a vanished client within %d s: stopping it",
			  grace_sec);
		if (stop_locked(note) != WINDOW_NOT_STARTED)
			snprintf(last_note, sizeof(last_note), "%s/host/%s", current.host.path,
				 PROFDIR_ORPHAN_NOTE);
	}
	orphan_since_ms = -1;
	pthread_mutex_unlock(&window_lock);
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
	orphan_since_ms = -1;
	last_note[0] = '\0';
}
