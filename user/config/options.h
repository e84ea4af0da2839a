/* SPDX-License-Identifier: MIT */
/*
 * Command-line options, msprof-compatible: `--name=value` only, the first
 * argument not starting with "--" begins the application command, errors
 * print msprof's text and end the run with status 255.
 *
 * Errors: convention 3 of docs/ERRORS.md (printed, then -EINVAL).
 */
#ifndef DYNPROF_OPTIONS_H
#define DYNPROF_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "shared/cards.h"
#include "dynprof/proto.h"
#include "shared/compiler.h"

#define OPTIONS_MAX_SWITCHES 40
#define OPTIONS_MAX_DEVICES 16
#define OPTIONS_MAX_WINDOWS 16
#define OPTIONS_MAX_FILTERS 16           /* values of each of --container, --user, --exe */
#define OPTIONS_DEFAULT_TIMEOUT_MS 60000 /* per command, as msprof */
/*
 * Largest window folder copied out of a target's own filesystem (its data
 * bytes: holes of sparse files cost nothing). Real CANN windows of a few
 * minutes are MiB to a few GiB; 64 GiB leaves room for long ones while a
 * target cannot fill the host's disk through dynprof.
 */
#define OPTIONS_DEFAULT_WINDOW_MAX_BYTES (64ULL << 30)
/* Files and folders of one window copied out (a real window holds hundreds to thousands). */
#define OPTIONS_DEFAULT_WINDOW_MAX_FILES 1000000ULL
#define OPTIONS_DEFAULT_WINDOW_COPY_MS \
	600000 /* 10 min: a copy runs beside the loop, so this bounds one window only */
#define OPTIONS_WINDOW_MAX_FILES_LIMIT 1000000000ULL
/* --host-sys-before's longest span: what a rule's cause needs, while memory stays bounded. */
#define OPTIONS_HOST_BEFORE_MAX_MS 60000
#define OPTIONS_DEFAULT_SYNC_MARGIN_MS 500 /* time for a console start to reach every node */
#define OPTIONS_DEFAULT_NODE_WAIT_MS 30000 /* the job's workers may still be starting */
#define EXIT_OPTION_ERROR 255              /* msprof's status for option errors */

/* One msprof collection switch the user gave (config/params.h turns it into keys). */
struct switch_setting {
	const char *option; /* e.g. "task-time" (static) */
	char *value;        /* as given, checked against the switch's domain */
};

struct options {
	int dynamic;             /* -1 not given, 0 off, 1 on */
	const char *pid_list;    /* --pid, as given */
	const char *output;      /* --output, as given (NULL: default) */
	const char *application; /* --application, as given */
	char **app_argv;         /* command after the options (NULL: none) */
	enum proto_version protocol;
	int timeout_ms;
	bool no_bpf;
	bool msprof_key;      /* launch: set DYNAMIC_PROFILING_KEY_PID as msprof does */
	bool app_stdin;       /* launch: the application gets dynprof's standard input */
	bool follow_detached; /* launch: the run lasts while any process of the tree lives
				    (--follow-detached=on, the default), not only the application */
	bool list;            /* --list: card users, then exit (or --watch) */
	bool watch;           /* --watch: with --list, report changes as they happen */
	bool json;            /* --json: JSON output for --list */
	const char *events;   /* --events=json[:PATH] (NULL: none) */
	bool trace;           /* --trace=on: <output>/<dynprof pid>_dynprof_trace.json */
	unsigned long long trace_fold_ns; /* --trace-fold: calls shorter are counted, not drawn */
	int nwindows;                     /* --window=RULE, repeatable (parsed by rule.c) */
	const char *windows[OPTIONS_MAX_WINDOWS];
	const char *commands; /* --commands=FILE ("-": standard input) */
	const char *control;  /* --control=SPEC (control.h) */
	const char *remote;   /* --remote=PATH: the client of a --control socket; the
				    command is app_argv's words */
	bool follow;          /* --follow (with --pid=auto): card users join as they come */
	/*
	 * Filters of --pid=auto (and --list for --container), each repeatable:
	 * any value of one option, every option given (match_filters).
	 * --pid=N --container=X: exactly one container, where N is the pid inside.
	 */
	int ncontainers; /* --container=NAME|ID (its name, id or a prefix of the id) */
	const char *containers[OPTIONS_MAX_FILTERS];
	int nusers; /* --user=NAME|UID */
	const char *users[OPTIONS_MAX_FILTERS];
	int nexes; /* --exe=GLOB (the exe path or its base name) */
	const char *exes[OPTIONS_MAX_FILTERS];
	int ndevices; /* --device=GLOB, repeatable */
	const char *devices[OPTIONS_MAX_DEVICES];
	const char *chip; /* --chip=NAME|NUMBER (config/pmu.h), NULL: found or unknown */
	unsigned long long window_max_bytes; /* --window-max-size=SIZE (default above) */
	unsigned long long window_max_files; /* --window-max-files=N (default above) */
	int window_copy_ms; /* --window-copy-time: a window's whole copy out of a target's filesystem */
	int host_before_ms; /* --host-sys-before: host data kept from the join, the last this long (0: off) */
	bool dry_run; /* --dry-run: print the params JSON, connect to nothing */
	/* A whole cluster job (cluster/cluster.c, cluster/node_copy.c). */
	const char *slurm_job; /* --slurm-job=J: the coordinator, or with node_copy the job's pids */
	const char *nodes;     /* --nodes=A,B,...: the coordinator over a launcher */
	const char *launcher;  /* --launcher=TEMPLATE ({node} replaced), NULL: "ssh {node}" */
	int sync_margin_ms; /* --sync-margin: a console start opens at now + this on every node */
	int node_wait_ms;   /* --node-wait: how long a node copy waits for the job's targets */
	const char *node_copy; /* hidden --node-copy=NAME|-: one node's copy under a coordinator */
	int argc;              /* the command line as given (a coordinator passes it on) */
	char **argv;
	bool help;
	bool version;
	int nswitches;
	struct switch_setting switches[OPTIONS_MAX_SWITCHES];
};

/*
 * Parse argv. Returns 0, or -EINVAL after printing the one error line
 * (msprof's text where msprof has one) to stdout, as msprof does; after
 * -EINVAL nothing is left to free.
 */
int options_parse(int argc, char **argv, struct options *o) DP_MUST_CHECK;
void options_free(struct options *o);

/*
 * One value of a --pid list, the `len` bytes at text: 0 with *pid set, or
 * -EINVAL after printing why (a number out of 1..999999999, a negative
 * number, or not a number).
 */
int options_pid_value(const char *text, size_t len, int *pid) DP_MUST_CHECK;

/* A node's name fits a folder and a command word ([A-Za-z0-9._-], 1 to 63, no leading '.' or '-'). */
bool options_node_name_valid(const char *v, size_t len);

/* The card patterns: --device globs, else the defaults (no copy made). */
void options_card_patterns(const struct options *o, struct card_patterns *p);

/* The value of a collection switch the user gave, or NULL. */
const char *options_switch(const struct options *o, const char *option);

/* The full --help text. */
void options_print_help(void);

#endif /* DYNPROF_OPTIONS_H */
