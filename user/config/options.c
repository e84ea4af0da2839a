// SPDX-License-Identifier: MIT
/* msprof-compatible option parsing (see options.h). */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/hostsys.h"
#include "config/options.h"
#include "report/report.h"
#include "report/trace_out.h"
#include "config/rule.h"
#include "shared/decimal.h"
#include "shared/array_size.h"
#include "config/pmu.h"

/* ---- value domains --------------------------------------------------------- */

static const char *const on_off[] = { "on", "off", NULL };
static const char *const task_time_values[] = { "on", "off", "l0", "l1", "l2", "l3", NULL };
static const char *const modes[] = { "task-based", "sample-based", NULL };
static const char *const ge_api_values[] = { "off", "l0", "l1", NULL };
static const char *const export_types[] = { "text", "db", NULL };
static const char *const host_sys_items[] = { "cpu", "mem", "disk", "network", "osrt", "numa", NULL };
static const char *const host_usage_items[] = { "cpu", "mem", NULL };

enum domain_kind {
	DOM_ONE_OF,  /* exactly one of `words` */
	DOM_LIST_OF, /* comma-separated, each of `words`, no repeats */
	DOM_STORAGE, /* <N>MB, 200..4294967295 */
	DOM_RANGE,   /* an integer in [lo, hi] */
	DOM_ENV,     /* k=v;k=v */
	DOM_METRIC,  /* a metric name msprof knows, or Custom:<hex,...> */
	DOM_TEXT,    /* any non-empty text */
};

struct switch_def {
	const char *option;
	enum domain_kind kind;
	const char *const *words;
	int lo, hi; /* DOM_RANGE */
};

/*
 * msprof's collection switches dynprof takes; config/params_v2.c and
 * params_v1.c turn them into each generation's keys.
 */
static const struct switch_def switch_defs[] = {
	{ "ascendcl", DOM_ONE_OF, on_off, 0, 0 },
	{ "model-execution", DOM_ONE_OF, on_off, 0, 0 },
	{ "runtime-api", DOM_ONE_OF, on_off, 0, 0 },
	{ "task-time", DOM_ONE_OF, task_time_values, 0, 0 },
	{ "aicpu", DOM_ONE_OF, on_off, 0, 0 },
	{ "hccl", DOM_ONE_OF, on_off, 0, 0 },
	{ "msproftx", DOM_ONE_OF, on_off, 0, 0 },
	{ "mstx-domain-include", DOM_TEXT, NULL, 0, 0 },
	{ "mstx-domain-exclude", DOM_TEXT, NULL, 0, 0 },
	{ "l2", DOM_ONE_OF, on_off, 0, 0 },
	{ "ai-core", DOM_ONE_OF, on_off, 0, 0 },
	{ "aic-mode", DOM_ONE_OF, modes, 0, 0 },
	{ "aic-metrics", DOM_METRIC, NULL, 0, 0 },
	{ "aic-freq", DOM_RANGE, NULL, 1, 100 },
	/* Nano only (check_combination): elsewhere msprof does not know them. */
	{ "ai-vector-core", DOM_ONE_OF, on_off, 0, 0 },
	{ "aiv-mode", DOM_ONE_OF, modes, 0, 0 },
	{ "aiv-metrics", DOM_METRIC, NULL, 0, 0 },
	{ "aiv-freq", DOM_RANGE, NULL, 1, 100 },
	{ "ge-api", DOM_ONE_OF, ge_api_values, 0, 0 },
	{ "task-memory", DOM_ONE_OF, on_off, 0, 0 },
	{ "task-tsfw", DOM_ONE_OF, on_off, 0, 0 },
	{ "storage-limit", DOM_STORAGE, NULL, 0, 0 },
	{ "host-sys", DOM_LIST_OF, host_sys_items, 0, 0 },
	{ "host-sys-usage", DOM_LIST_OF, host_usage_items, 0, 0 },
	{ "host-sys-usage-freq", DOM_RANGE, NULL, 1, 50 },
	{ "host-sys-pid", DOM_RANGE, NULL, 0, 2147483647 },
	{ "sys-profiling", DOM_ONE_OF, on_off, 0, 0 },
	{ "sys-sampling-freq", DOM_RANGE, NULL, 1, 10 },
	{ "sys-pid-profiling", DOM_ONE_OF, on_off, 0, 0 },
	{ "sys-pid-sampling-freq", DOM_RANGE, NULL, 1, 10 },
	{ "type", DOM_ONE_OF, export_types, 0, 0 },
	{ "environment", DOM_ENV, NULL, 0, 0 },
};

/* msprof options that dynamic mode refuses (its check after parsing). */
static const char *const refused_in_dynamic[] = {
	"sys-devices",
	"sys-period",
	"sys-cpu-profiling",
	NULL,
};

/*
 * msprof switches of its whitelist that dynprof does not derive yet: refused
 * with a line saying so, rather than sent without their derived keys.
 */
static const char *const not_supported[] = {
	"sys-hardware-mem",
	"sys-hardware-mem-freq",
	"llc-profiling",
	"sys-io-profiling",
	"sys-io-sampling-freq",
	"sys-interconnection-profiling",
	"sys-interconnection-freq",
	"dvpp-profiling",
	"dvpp-freq",
	"task-block",
	"sys-lp",
	"sys-lp-freq",
	"instr-profiling",
	"instr-profiling-freq",
	"npu-events",
	"optype",
	"sys-mem-serviceflow",
	"delay",
	"duration",
	NULL,
};

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report_verror(fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int word_index(const char *const *words, const char *w, size_t len)
{
	for (int i = 0; words[i]; i++)
		if (strlen(words[i]) == len && !strncmp(words[i], w, len))
			return i;
	return -1;
}

/* "'a', 'b' or 'c'" for the error messages. */
static void words_text(const char *const *words, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; words[i] && off < len; i++) {
		const char *sep = i == 0 ? "" : words[i + 1] ? ", " : " or ";

		off += (size_t)snprintf(buf + off, len - off, "%s'%s'", sep, words[i]);
	}
}

static bool list_valid(const char *const *words, const char *v)
{
	unsigned seen = 0;

	for (const char *p = v;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		int i = word_index(words, p, len);

		if (i < 0 || (seen & (1u << i)))
			return false;
		seen |= 1u << i;
		if (!comma)
			return true;
		p = comma + 1;
	}
}

static bool storage_valid(const char *v)
{
	uint64_t n;
	size_t digits;

	return !decimal_prefix(v, SIZE_MAX, 4294967295ULL, &n, &digits) &&
	       !strcmp(v + digits, "MB") && n >= 200;
}

static bool env_valid(const char *v)
{
	if (!*v)
		return false;
	for (const char *p = v; *p;) {
		const char *semi = strchr(p, ';');
		size_t len = semi ? (size_t)(semi - p) : strlen(p);
		const char *eq = memchr(p, '=', len);

		if (!eq || eq == p)
			return false;
		if (!semi)
			break;
		p = semi + 1;
	}
	return true;
}

/* Custom:<hex>[,<hex>...], each 0x followed by 1 to 8 hex digits. */
static bool custom_metric_valid(const char *v)
{
	if (strncmp(v, "Custom:", 7))
		return false;
	for (const char *p = v + 7;;) {
		size_t n = 0;

		if (p[0] != '0' || (p[1] != 'x' && p[1] != 'X'))
			return false;
		for (p += 2; isxdigit((unsigned char)*p); p++)
			n++;
		if (n == 0 || n > 8)
			return false;
		if (!*p)
			return true;
		if (*p++ != ',')
			return false;
	}
}

static int check_switch(const struct switch_def *d, const char *v)
{
	char words[160];
	int n;

	switch (d->kind) {
	case DOM_ONE_OF:
		if (word_index(d->words, v, strlen(v)) >= 0)
			return 0;
		words_text(d->words, words, sizeof(words));
		return fail("Argument --%s: invalid value: %s. Please input %s.", d->option, v, words);
	case DOM_LIST_OF:
		if (list_valid(d->words, v))
			return 0;
		words_text(d->words, words, sizeof(words));
		return fail("Argument --%s: invalid value: %s. Please input a comma-separated list of %s.",
			    d->option, v, words);
	case DOM_STORAGE:
		if (storage_valid(v))
			return 0;
		return fail("Argument --%s: invalid value: %s. Please input an integer in [200, 4294967295] followed by MB, e.g. 1024MB.",
			    d->option, v);
	case DOM_RANGE:
		if (!decimal_int(v, d->lo, d->hi, &n))
			return 0;
		return fail("Argument --%s: invalid value: %s. Please input an integer in [%d, %d].",
			    d->option, v, d->lo, d->hi);
	case DOM_ENV:
		if (env_valid(v))
			return 0;
		return fail("Argument --%s: invalid value: %s. Please input 'name=value;name=value'.",
			    d->option, v);
	case DOM_METRIC:
		if (pmu_metric_known(v) || custom_metric_valid(v))
			return 0;
		return fail("Argument --%s: invalid value: %s. Please input PipeUtilization, ArithmeticUtilization, Memory, MemoryL0, MemoryUB, ResourceConflictRatio, L2Cache, MemoryAccess, PipelineExecuteUtilization or Custom:<hex>,<hex>...",
			    d->option, v);
	case DOM_TEXT:
		if (*v)
			return 0;
		return fail("Argument --%s: empty value.", d->option);
	}
	return -EINVAL;
}

/*
 * CANN 9.x's params parser ends a string at the next '"' and decodes no
 * escape (docs/PROTOCOL.md Part 2 section 5): a '"' makes START fail, a '\'
 * or a control character arrives as its JSON escape, not as typed.
 */
static int check_carried(const char *option, const char *v)
{
	for (const unsigned char *c = (const unsigned char *)v; *c; c++)
		if (*c == '"' || *c == '\\' || *c < 0x20 || *c == 0x7f)
			return fail("Argument --%s: invalid value: %s. CANN's parameter parser cannot carry '\"', '\\' or control characters; please remove them.",
				    option, v);
	return 0;
}

/* Record the switch, replacing an earlier setting of the same one. */
static int set_switch(struct options *o, const char *option, const char *value)
{
	char *copy = strdup(value);
	int i;

	if (!copy)
		return fail("dynprof: out of memory");
	for (i = 0; i < o->nswitches; i++)
		if (!strcmp(o->switches[i].option, option))
			break;
	if (i == OPTIONS_MAX_SWITCHES) {
		free(copy);
		return fail("dynprof: too many switches");
	}
	if (i == o->nswitches)
		o->nswitches++;
	else
		free(o->switches[i].value);
	o->switches[i] = (struct switch_setting){ option, copy };
	return 0;
}

/* msprof's notes on the switches it keeps only for compatibility. */
static void switch_notes(const char *option)
{
	if (!strcmp(option, "model-execution") || !strcmp(option, "hccl"))
		report_warning("[Note] [%s] This option will be discarded in later versions.", option);
}

static const struct switch_def *find_switch(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(switch_defs); i++)
		if (!strcmp(switch_defs[i].option, name))
			return &switch_defs[i];
	return NULL;
}

/* --timeout: a duration as rule.h reads it (N, Nms, Ns, Nm, Nh), 1 ms to 3600 s. */
static int parse_timeout_ms(const char *v)
{
	int64_t ms;

	if (duration_parse_ms(v, &ms) || ms > 3600 * 1000)
		return -1;
	return (int)ms;
}

static int parse_dynamic(struct options *o, const char *v)
{
	if (!strcmp(v, "on"))
		o->dynamic = 1;
	else if (!strcmp(v, "off"))
		o->dynamic = 0;
	else
		return fail("Argument --dynamic: invalid value: %s. Please input 'on' or 'off'.", v);
	return 0;
}

static int parse_protocol(struct options *o, const char *v)
{
	if (!strcmp(v, "auto"))
		o->protocol = PROTO_AUTO;
	else if (!strcmp(v, "v1"))
		o->protocol = PROTO_V1;
	else if (!strcmp(v, "v2"))
		o->protocol = PROTO_V2;
	else
		return fail("Argument --protocol: invalid value: %s. Please input 'auto', 'v1' or 'v2'.",
			    v);
	return 0;
}

/* --device=GLOB: an absolute glob naming card nodes; replaces the defaults. */
static int add_device(struct options *o, const char *v)
{
	if (v[0] != '/')
		return fail("Argument --device: invalid value: %s. Please input an absolute glob such as '/dev/davinci*'.",
			    v);
	if (o->ndevices == OPTIONS_MAX_DEVICES)
		return fail("Argument --device: at most %d patterns.", OPTIONS_MAX_DEVICES);
	o->devices[o->ndevices++] = v;
	return 0;
}

/*
 * A container's name or id, or a prefix of its id: what engines allow in
 * names ([A-Za-z0-9_.+-]), '/' for Kubernetes' "<namespace>/<pod>", '@' for
 * a rootless podman container's "<name>@<uid>" (model/procscan.c); a
 * prefix of an id has at least 4 hex digits (checked where it is matched).
 */
static bool container_char(unsigned char c)
{
	return isalnum(c) || (c && strchr("_.+-/@", c));
}

/* 1 to `max` characters, each one `ok` takes. */
static bool text_valid(const char *v, size_t max, bool (*ok)(unsigned char c))
{
	size_t n = strlen(v);

	if (n == 0 || n > max)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!ok((unsigned char)v[i]))
			return false;
	return true;
}

/* Options that take no value. */
static int parse_flag(struct options *o, const char *name)
{
	if (!strcmp(name, "help"))
		o->help = true;
	else if (!strcmp(name, "version"))
		o->version = true;
	else if (!strcmp(name, "no-bpf"))
		o->no_bpf = true;
	else if (!strcmp(name, "msprof-key"))
		o->msprof_key = true;
	else if (!strcmp(name, "app-stdin"))
		o->app_stdin = true;
	else if (!strcmp(name, "list"))
		o->list = true;
	else if (!strcmp(name, "watch"))
		o->watch = true;
	else if (!strcmp(name, "json"))
		o->json = true;
	else if (!strcmp(name, "dry-run"))
		o->dry_run = true;
	else if (!strcmp(name, "follow"))
		o->follow = true;
	else
		return -ENOENT;
	return 0;
}

static bool in_list(const char *const *list, const char *name)
{
	for (int i = 0; list[i]; i++)
		if (!strcmp(list[i], name))
			return true;
	return false;
}

static bool refused_in_dynamic_mode(const char *name)
{
	return in_list(refused_in_dynamic, name);
}

/* A size: decimal bytes, or with one of K, M, G, T (powers of 1024); at least 1. */
static int parse_size(const char *v, unsigned long long *out)
{
	static const char units[] = "KMGT";
	unsigned long long n = 0;
	const char *p = v;
	int shift = 0;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (n > (ULLONG_MAX - 9) / 10)
			return -EINVAL;
		n = n * 10 + (unsigned long long)(*p - '0');
	}
	if (*p) {
		const char *u = strchr(units, *p);

		if (!u || p[1])
			return -EINVAL;
		shift = 10 * (int)(u - units + 1);
	}
	if (n == 0 || n > (ULLONG_MAX >> shift))
		return -EINVAL;
	*out = n << shift;
	return 0;
}

/*
 * An option that names one thing (--pid, --output, --application,
 * --container), given twice: refused, rather than the last one silently
 * winning (a launcher script that appends its own --pid to the user's).
 */
static int set_once(const char **field, const char *name, const char *v)
{
	if (*field)
		return fail("Argument --%s: given twice (%s and %s). Please give it once%s.", name,
			    *field, v,
			    !strcmp(name, "pid") ? ", with a comma-separated list of pids" : "");
	*field = v;
	return 0;
}

/* --container, --user, --exe: repeatable, any of the values matches. */
static int add_filter(const char **values, int *n, const char *name, const char *v)
{
	if (*n == OPTIONS_MAX_FILTERS)
		return fail("Argument --%s: at most %d values.", name, OPTIONS_MAX_FILTERS);
	values[(*n)++] = v;
	return 0;
}

/* A user name as passwd files hold them (no ':' or blank), or a uid. */
static bool user_char(unsigned char c)
{
	return isgraph(c) && c != ':';
}

/* A job id: digits, or an array job's element (J_K). */
static bool job_id_valid(const char *v)
{
	size_t digits = strspn(v, "0123456789");

	if (digits == 0 || digits > 10)
		return false;
	if (!v[digits])
		return true;
	return v[digits] == '_' && strspn(v + digits + 1, "0123456789") == strlen(v + digits + 1) &&
	       v[digits + 1];
}

/* A node name as a folder and a command word: [A-Za-z0-9._-], not starting with '.' or '-'. */
bool options_node_name_valid(const char *v, size_t len)
{
	if (len == 0 || len > 63 || v[0] == '.' || v[0] == '-')
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)v[i]) && !strchr("._-", v[i]))
			return false;
	return true;
}

static int parse_node_list(struct options *o, const char *v)
{
	for (const char *p = v;;) {
		size_t len = strcspn(p, ",");

		if (!options_node_name_valid(p, len))
			return fail("Argument --nodes: invalid node name '%.*s'. Please input a comma-separated list of host names (letters, digits, '.', '_', '-').",
				    (int)len, p);
		if (!p[len])
			break;
		p += len + 1;
	}
	return set_once(&o->nodes, "nodes", v);
}

/* A duration of 0 (off) or as --timeout reads it, up to an hour. */
static int parse_ms_or_zero(const char *name, const char *v, int *out)
{
	int64_t ms;

	if (!strcmp(v, "0")) {
		*out = 0;
		return 0;
	}
	if (duration_parse_ms(v, &ms) || ms > 3600 * 1000)
		return fail("Argument --%s: invalid value: %s. Please input a duration such as 500ms, 2s or 0 (at most 3600 s).",
			    name, v);
	*out = (int)ms;
	return 0;
}

/* --slurm-job, --nodes, --launcher, --sync-margin, --node-wait, --node-copy; -ENOENT: none of them. */
static int parse_cluster(struct options *o, const char *name, const char *v)
{
	if (!strcmp(name, "slurm-job")) {
		if (!job_id_valid(v))
			return fail("Argument --slurm-job: invalid value: %s. Please input a SLURM job id such as 4242.",
				    v);
		return set_once(&o->slurm_job, name, v);
	}
	if (!strcmp(name, "nodes"))
		return parse_node_list(o, v);
	if (!strcmp(name, "launcher")) {
		if (!strstr(v, "{node}"))
			return fail("Argument --launcher: invalid value: %s. Please input a command with {node} where the node's name goes, e.g. 'ssh {node}'.",
				    v);
		return set_once(&o->launcher, name, v);
	}
	if (!strcmp(name, "sync-margin"))
		return parse_ms_or_zero(name, v, &o->sync_margin_ms);
	if (!strcmp(name, "node-wait"))
		return parse_ms_or_zero(name, v, &o->node_wait_ms);
	if (!strcmp(name, "node-copy")) {
		if (strcmp(v, "-") && !options_node_name_valid(v, strlen(v)))
			return fail("Argument --node-copy: invalid node name: %s.", v);
		return set_once(&o->node_copy, name, v);
	}
	return -ENOENT;
}

/* --trace=on|off, --trace-fold=0|DURATION (at most 1 s: longer calls are rare, and all drawn). */
static int parse_trace(struct options *o, const char *name, const char *v)
{
	uint64_t ns = 0;

	if (!strcmp(name, "trace")) {
		if (strcmp(v, "on") && strcmp(v, "off"))
			return fail("Argument --trace: invalid value: %s. Please input 'on' or 'off'.", v);
		o->trace = !strcmp(v, "on");
		return 0;
	}
	if ((strcmp(v, "0") && duration_parse_ns(v, &ns)) || ns > 1000000000ull)
		return fail("Argument --trace-fold: invalid value: %s. Please input 0 or a duration such as 100us, 2ms (at most 1s).",
			    v);
	o->trace_fold_ns = ns;
	return 0;
}

static int parse_plain(struct options *o, const char *name, const char *v)
{
	const struct switch_def *d;
	int ms;

	if (!strcmp(name, "dynamic"))
		return parse_dynamic(o, v);
	if (!strcmp(name, "pid"))
		return set_once(&o->pid_list, name, v);
	if (!strcmp(name, "output"))
		return set_once(&o->output, name, v);
	if (!strcmp(name, "application"))
		return set_once(&o->application, name, v);
	if (!strcmp(name, "protocol"))
		return parse_protocol(o, v);
	if (!strcmp(name, "device"))
		return add_device(o, v);
	if (!strcmp(name, "container")) {
		if (!text_valid(v, 95, container_char))
			return fail("Argument --container: invalid value: %s. Please input a container name, or its id (hex, at least 4 characters) or a prefix of it.",
				    v);
		return add_filter(o->containers, &o->ncontainers, name, v);
	}
	if (!strcmp(name, "user")) {
		if (!text_valid(v, 64, user_char))
			return fail("Argument --user: invalid value: %s. Please input a user name or a uid.",
				    v);
		return add_filter(o->users, &o->nusers, name, v);
	}
	if (!strcmp(name, "exe")) {
		if (!*v)
			return fail("Argument --exe: empty value. Please input a glob of the executable's path or name, e.g. python3* or /usr/bin/*.");
		return add_filter(o->exes, &o->nexes, name, v);
	}
	if (!strcmp(name, "follow-detached")) {
		if (strcmp(v, "on") && strcmp(v, "off"))
			return fail("Argument --follow-detached: invalid value: %s. Please input 'on' or 'off'.",
				    v);
		o->follow_detached = !strcmp(v, "on");
		return 0;
	}
	if (!strcmp(name, "events")) {
		if (strcmp(v, "json") && strncmp(v, "json:", 5))
			return fail("Argument --events: invalid value: %s. Please input 'json' or 'json:PATH'.",
				    v);
		o->events = v;
		return 0;
	}
	if (!strcmp(name, "trace") || !strcmp(name, "trace-fold"))
		return parse_trace(o, name, v);
	if (!strcmp(name, "window")) {
		if (o->nwindows == OPTIONS_MAX_WINDOWS)
			return fail("Argument --window: at most %d rules.", OPTIONS_MAX_WINDOWS);
		o->windows[o->nwindows++] = v;
		return 0;
	}
	if (!strcmp(name, "commands") || !strcmp(name, "control")) {
		if (!*v)
			return fail("Argument --%s: empty value.", name);
		*(!strcmp(name, "commands") ? &o->commands : &o->control) = v;
		return 0;
	}
	if (!strcmp(name, "remote")) {
		if (!*v)
			return fail("Argument --remote: empty value. Please input the control socket's path.");
		o->remote = v;
		return 0;
	}
	if (!strcmp(name, "timeout")) {
		ms = parse_timeout_ms(v);
		if (ms < 0)
			return fail("Argument --timeout: invalid value: %s. Please input a duration such as 60, 30s or 500ms (at most 3600 s).",
				    v);
		o->timeout_ms = ms;
		return 0;
	}
	if (!strcmp(name, "window-max-size")) {
		if (parse_size(v, &o->window_max_bytes))
			return fail("Argument --window-max-size: invalid value: %s. Please input a size such as 64G, 512M or 1048576 (bytes; K, M, G, T: powers of 1024).",
				    v);
		return 0;
	}
	if (!strcmp(name, "window-copy-time")) {
		ms = parse_timeout_ms(v);
		if (ms <= 0)
			return fail("Argument --window-copy-time: invalid value: %s. Please input a duration such as 600, 90s or 500ms (at most 3600 s).",
				    v);
		o->window_copy_ms = ms;
		return 0;
	}
	if (!strcmp(name, "host-sys-before")) {
		int64_t before;

		if (duration_parse_ms(v, &before) || before > OPTIONS_HOST_BEFORE_MAX_MS)
			return fail("Argument --host-sys-before: invalid value: %s. Please input a duration such as 2s or 500ms (from 1 ms to %d s).",
				    v, OPTIONS_HOST_BEFORE_MAX_MS / 1000);
		o->host_before_ms = (int)before;
		return 0;
	}
	if (!strcmp(name, "window-max-files")) {
		uint64_t n;

		if (decimal_u64(v, 1, OPTIONS_WINDOW_MAX_FILES_LIMIT, &n))
			return fail("Argument --window-max-files: invalid value: %s. Please input a number of files and folders from 1 to %llu.",
				    v, OPTIONS_WINDOW_MAX_FILES_LIMIT);
		o->window_max_files = n;
		return 0;
	}
	if (!strcmp(name, "chip")) {
		if (!chip_by_text(v))
			return fail("Argument --chip: invalid value: %s. Please input a chip number (0-18) or name, e.g. 5 or CHIP_V4_1_0 (ascend910b).",
				    v);
		o->chip = v;
		return 0;
	}
	if (refused_in_dynamic_mode(name))
		return fail("Argument --dynamic and --%s cannot be configured at the same time.", name);
	if (in_list(not_supported, name))
		return fail("Argument --%s: dynprof does not derive this msprof switch's keys yet; it is not sent. Run 'dynprof --help' for the switches it takes.",
			    name);
	d = find_switch(name);
	if (!d)
		return fail("Argument --%s: unknown option. Run 'dynprof --help' for the options.", name);
	if (check_switch(d, v) || check_carried(name, v))
		return -EINVAL;
	switch_notes(d->option);
	return set_switch(o, d->option, v);
}

static int parse_valued(struct options *o, const char *name, const char *v)
{
	int rc = parse_cluster(o, name, v);

	return rc != -ENOENT ? rc : parse_plain(o, name, v);
}

static int parse_one(struct options *o, const char *arg)
{
	const char *name = arg + 2, *eq = strchr(name, '=');
	char key[64];
	size_t len;

	if (!strcmp(arg, "-h"))
		return parse_flag(o, "help");
	if (!eq) {
		if (parse_flag(o, name) == 0)
			return 0;
		if (find_switch(name) || refused_in_dynamic_mode(name) || !strcmp(name, "pid") ||
		    !strcmp(name, "output") || !strcmp(name, "dynamic") ||
		    !strcmp(name, "application") || !strcmp(name, "protocol") ||
		    !strcmp(name, "timeout") || !strcmp(name, "device") || !strcmp(name, "container") ||
		    !strcmp(name, "events") || !strcmp(name, "window") || !strcmp(name, "trace") ||
		    !strcmp(name, "trace-fold") || !strcmp(name, "commands") ||
		    !strcmp(name, "control") || !strcmp(name, "chip") || !strcmp(name, "remote") ||
		    !strcmp(name, "window-max-size") || !strcmp(name, "window-max-files") ||
		    !strcmp(name, "window-copy-time") || !strcmp(name, "follow-detached") ||
		    !strcmp(name, "host-sys-before") || !strcmp(name, "user") ||
		    !strcmp(name, "exe") || !strcmp(name, "slurm-job") || !strcmp(name, "nodes") ||
		    !strcmp(name, "launcher") || !strcmp(name, "sync-margin") ||
		    !strcmp(name, "node-wait") || !strcmp(name, "node-copy"))
			return fail("Argument --%s: expected one argument. Please use --%s=<value>.",
				    name, name);
		return fail("Argument --%s: unknown option. Run 'dynprof --help' for the options.", name);
	}
	len = (size_t)(eq - name);
	if (len == 0 || len >= sizeof(key))
		return fail("Argument %s: unknown option. Run 'dynprof --help' for the options.", arg);
	memcpy(key, name, len);
	key[len] = '\0';
	return parse_valued(o, key, eq + 1);
}

const char *options_switch(const struct options *o, const char *option)
{
	for (int i = 0; i < o->nswitches; i++)
		if (!strcmp(o->switches[i].option, option))
			return o->switches[i].value;
	return NULL;
}

/*
 * msprof removes the AI vector core switches from its options with
 * --dynamic on every chip but Nano: getopt then calls them unrecognized.
 */
static int check_aiv_switches(const struct options *o)
{
	static const char *const aiv[] = { "ai-vector-core", "aiv-mode", "aiv-metrics", "aiv-freq" };
	const struct chip_info *chip = o->chip ? chip_by_text(o->chip) : NULL;

	if (chip && chip->id == CHIP_NANO_V1)
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(aiv); i++) {
		const char *v = options_switch(o, aiv[i]);

		if (v)
			return fail("dynprof: unrecognized option '--%s=%s' (as msprof with --dynamic: the AI vector core follows --ai-core, --aic-mode, --aic-metrics and --aic-freq; only Nano, --chip=NANO_V1, takes it).",
				    aiv[i], v);
	}
	return 0;
}

/* msprof's checks across collection switches. */
static int check_switch_combination(const struct options *o)
{
	bool include = options_switch(o, "mstx-domain-include") != NULL;
	bool exclude = options_switch(o, "mstx-domain-exclude") != NULL;
	const char *tx = options_switch(o, "msproftx");

	if (check_aiv_switches(o))
		return -EINVAL;
	if (include && exclude)
		return fail("Argument --mstx-domain-include and --mstx-domain-exclude cannot be configured at the same time.");
	if ((include || exclude) && (!tx || strcmp(tx, "on")))
		return fail("Argument --%s: it needs --msproftx=on.",
			    include ? "mstx-domain-include" : "mstx-domain-exclude");
	return 0;
}

/*
 * A whole cluster job: the coordinator (--slurm-job or --nodes) or one
 * node's copy (--node-copy). Their targets come from the job or from
 * --pid on each node; what only one process can own is refused.
 */
static int check_cluster(struct options *o)
{
	bool has_app = o->application || o->app_argv;
	const char *what = o->slurm_job ? "--slurm-job" : "--nodes";

	if (o->slurm_job && o->nodes)
		return fail("Argument --slurm-job and --nodes cannot be configured at the same time.");
	if (o->list || o->dry_run || has_app)
		return fail("Argument %s: it cannot be combined with --list, --dry-run or an application.",
			    what);
	if (o->control || o->app_stdin || o->msprof_key)
		return fail("Argument %s: it cannot be combined with --control, --app-stdin or --msprof-key (each node's copy has its own console).",
			    what);
	if (o->slurm_job && (o->pid_list || o->ncontainers))
		return fail("Argument --slurm-job: the job's processes are the targets; --pid and --container cannot be configured with it.");
	if (o->dynamic == 0)
		return fail("Argument --dynamic=off, but %s is set.", what);
	if (o->launcher && !o->nodes)
		return fail("Argument --launcher: it goes with --nodes.");
	o->dynamic = 1;
	return 0;
}

/* --remote=PATH CMD...: a client only; nothing of a run goes with it. */
static int check_remote(const struct options *o)
{
	if (!o->app_argv || !o->app_argv[0])
		return fail("Argument --remote: no command given. Please use dynprof --remote=PATH COMMAND... (start, stop, quit, status, ...).");
	if (o->pid_list || o->application || o->list || o->dry_run || o->commands || o->control ||
	    o->nwindows || o->events || o->trace || o->ncontainers || o->nusers || o->nexes ||
	    o->follow || o->dynamic == 1 || o->slurm_job || o->nodes)
		return fail("Argument --remote: it takes only --timeout and the command words (it is a client of a running dynprof).");
	return 0;
}

/*
 * --follow, --user and --exe choose among every card user: --pid=auto
 * only. --pid=N --container=X maps N inside one container.
 */
static int check_selection(const struct options *o)
{
	bool pid_auto = o->pid_list && !strcmp(o->pid_list, "auto");

	if (o->follow && !pid_auto)
		return fail("Argument --follow: it goes with --pid=auto (every card user of the host and its containers, joined as it comes).");
	if ((o->nusers || o->nexes) && !pid_auto)
		return fail("Argument --%s: it goes with --pid=auto.", o->nusers ? "user" : "exe");
	if (o->ncontainers > 1 && o->pid_list && !pid_auto)
		return fail("Argument --container: with --pid=<pid inside the container>, give one container (%s and %s given).",
			    o->containers[0], o->containers[1]);
	return 0;
}

/* msprof's checks across options. */
static int check_combination(struct options *o)
{
	bool has_app = o->application || o->app_argv;

	if (o->help || o->version)
		return 0;
	if (o->remote)
		return check_remote(o);
	if (check_switch_combination(o))
		return -EINVAL;
	if (o->slurm_job || o->nodes)
		return check_cluster(o);
	if (o->launcher)
		return fail("Argument --launcher: it goes with --nodes.");
	if (o->node_copy && (has_app || o->list || o->control))
		return fail("Argument --node-copy: it cannot be combined with --list, --control or an application.");
	if (o->watch && !o->list)
		return fail("Argument --watch: it goes with --list.");
	if (o->json && !o->list)
		return fail("Argument --json: it goes with --list.");
	if (check_selection(o))
		return -EINVAL;
	if (o->host_before_ms && !hostsys_own(options_switch(o, "host-sys")))
		return fail("Argument --host-sys-before: it goes with --host-sys=osrt,cpu,mem,network (what dynprof collects itself).");
	if (o->list) {
		if (o->events)
			return fail("Argument --events: it cannot be combined with --list (see --json).");
		if (o->trace)
			return fail("Argument --trace: it cannot be combined with --list (it records a run's windows).");
		if (o->nwindows || o->commands || o->control)
			return fail("Argument --list: it cannot be combined with --window, --commands or --control.");
		if (o->pid_list || has_app || o->dynamic == 1)
			return fail("Argument --list: it cannot be combined with --dynamic, --pid or an application.");
		return 0;
	}
	if (o->ncontainers && !o->pid_list)
		return fail("Argument --container: it goes with --list, --pid=auto or --pid=<pid inside the container>.");
	if (o->dynamic == 0 && o->pid_list)
		return fail("Argument --dynamic=off, but --pid is set.");
	if (o->dynamic == -1 && o->pid_list)
		o->dynamic = 1; /* --pid alone implies dynamic mode */
	if (o->dry_run)
		return 0; /* nothing is reached: --pid and an application are optional */
	if (o->dynamic != 1)
		return fail("Argument --dynamic: dynprof needs --dynamic=on (or --pid). Run 'dynprof --help' for usage.");
	if (!o->pid_list && !has_app)
		return fail("Argument --dynamic=on, but --application/--pid is all empty.");
	if (o->pid_list && has_app)
		return fail("Argument --dynamic=on, can not set --application/--pid at the same time.");
	if (o->application && o->app_argv)
		return fail("Argument --application: the application is given twice (--application and a command).");
	if (o->commands && !strcmp(o->commands, "-") && o->app_stdin)
		return fail("Argument --commands=-: standard input is the application's (--app-stdin).");
	return 0;
}

int options_parse(int argc, char **argv, struct options *o)
{
	memset(o, 0, sizeof(*o));
	o->dynamic = -1;
	o->protocol = PROTO_AUTO;
	o->timeout_ms = OPTIONS_DEFAULT_TIMEOUT_MS;
	o->window_max_bytes = OPTIONS_DEFAULT_WINDOW_MAX_BYTES;
	o->trace_fold_ns = TRACE_DEFAULT_FOLD_NS;
	o->window_max_files = OPTIONS_DEFAULT_WINDOW_MAX_FILES;
	o->window_copy_ms = OPTIONS_DEFAULT_WINDOW_COPY_MS;
	o->follow_detached = true;
	o->sync_margin_ms = OPTIONS_DEFAULT_SYNC_MARGIN_MS;
	o->node_wait_ms = OPTIONS_DEFAULT_NODE_WAIT_MS;
	o->argc = argc;
	o->argv = argv;
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] == '-' && argv[i][1] && argv[i][1] != '-' && strcmp(argv[i], "-h")) {
			/* `-p 123` is not an application called "-p": msprof takes no short options. */
			fail("Argument %s: unknown option (dynprof takes --name=value options only; an application whose name starts with '-' goes after --). Run 'dynprof --help' for the options.",
			     argv[i]);
			goto refused;
		}
		if (strncmp(argv[i], "--", 2) != 0 && strcmp(argv[i], "-h") != 0) {
			o->app_argv = &argv[i];
			break;
		}
		if (!strcmp(argv[i], "--")) {
			o->app_argv = i + 1 < argc ? &argv[i + 1] : NULL;
			break;
		}
		if (parse_one(o, argv[i]))
			goto refused;
	}
	if (check_combination(o) == 0)
		return 0;
refused:
	/* A refused command line owns nothing: the caller only exits. */
	options_free(o);
	return -EINVAL;
}

int options_pid_value(const char *text, size_t len, int *pid)
{
	uint64_t v;
	int rc = decimal_span(text, len, 1, 999999999, &v);

	if (rc == 0) {
		*pid = (int)v;
		return 0;
	}
	/* "0", "-5", "1e3": only the last is not a number (msprof says non-numeric of all). */
	if (rc == -ERANGE ||
	    (len > 1 && text[0] == '-' && decimal_span(text + 1, len - 1, 0, UINT64_MAX, &v) == 0))
		report_error("Argument --pid: invalid pid value: %.*s (a pid is a number from 1 to 999999999), stop profiling.",
			     (int)len, text);
	else
		report_error("Argument --pid: invalid non-numeric pid value: %.*s, stop profiling.",
			     (int)len, text);
	return -EINVAL;
}

void options_card_patterns(const struct options *o, struct card_patterns *p)
{
	if (o->ndevices == 0) {
		cards_default_patterns(p);
		return;
	}
	p->storage = NULL;
	p->count = o->ndevices;
	for (int i = 0; i < o->ndevices; i++)
		p->glob[i] = (char *)o->devices[i];
}

void options_free(struct options *o)
{
	for (int i = 0; i < o->nswitches; i++)
		free(o->switches[i].value);
	o->nswitches = 0;
}

void options_print_help(void)
{
	fputs("Usage: dynprof --dynamic=on --pid=PID[,PID...]|auto [--output=DIR] [options] [switches]\n"
	      "       dynprof --pid=auto --follow [--container=ID|NAME...] [--user=U...] [--exe=GLOB...]\n"
	      "               [--window=RULE...] [--control=SPEC] [--output=DIR] [switches]\n"
	      "       dynprof --dynamic=on [--output=DIR] [options] [switches] APP [ARGS...]\n"
	      "       dynprof --list [--watch] [--json] [--device=GLOB...] [--container=NAME|ID...]\n"
	      "       dynprof --slurm-job=J [--output=DIR] [options] [switches]\n"
	      "       dynprof --nodes=A,B,... [--launcher='ssh {node}'] [--pid=...] [options] [switches]\n"
	      "\n"
	      "Open and close CANN profiling windows in running AI processes, over their\n"
	      "dynamic-profiling socket, with msprof's console: a drop-in for\n"
	      "'msprof --dynamic=on --pid=...' that reaches every target in parallel,\n"
	      "finds sockets inside containers, refuses impostor sockets and never leaves\n"
	      "a target collecting.\n"
	      "\n"
	      "Options (always --name=value):\n"
	      "  --dynamic=on|off        dynamic mode; --pid alone implies on\n"
	      "  --pid=PID[,PID...]      target processes (host pids)\n"
	      "  --pid=auto              every card user whose socket listens (not busy)\n"
	      "  APP [ARGS...], --application=\"APP ARGS\"\n"
	      "                          launch mode: start APP with PROFILING_MODE=dynamic;\n"
	      "                          every descendant that holds a card and serves its\n"
	      "                          socket joins as a target (wrappers, torchrun, mpirun);\n"
	      "                          a joiner gets the open window at once; dynprof exits\n"
	      "                          with APP's status (128+N if signal N ended it)\n"
	      "  --msprof-key            launch: set DYNAMIC_PROFILING_KEY_PID to dynprof's pid,\n"
	      "                          as msprof does (its processes then share one socket\n"
	      "                          path: only the last one to start is reachable)\n"
	      "  --app-stdin             launch: APP reads dynprof's standard input (default:\n"
	      "                          /dev/null, the console keeps it); commands then come\n"
	      "                          only from signals, and the run ends with APP\n"
	      "  --follow-detached=on|off\n"
	      "                          launch: after APP exits, go on while any process\n"
	      "                          of its tree lives (workers detached with setsid -f\n"
	      "                          or a double fork); default on; off: end with APP\n"
	      "  --follow                with --pid=auto: go on following the host: every\n"
	      "                          card user of the host or of any container that\n"
	      "                          starts listening joins (within milliseconds), leaves\n"
	      "                          at its exit; a new one joins again. Rules apply to\n"
	      "                          each joiner from its join (+DURATION too), a joiner\n"
	      "                          gets an open window at once. The run ends only on\n"
	      "                          quit, SIGINT or SIGTERM: not with no target left,\n"
	      "                          nor at the end of standard input or --commands\n"
	      "  --container=NAME|ID     with --pid=auto (and --list): only those containers'\n"
	      "                          processes (repeatable: any of them); with --pid=N\n"
	      "                          (one only): N is the pid inside that container\n"
	      "                          (its name: docker's, podman's, runc's or crun's id,\n"
	      "                          Kubernetes' NAMESPACE/POD; or its id or a prefix\n"
	      "                          of at least 4 hex digits)\n"
	      "  --user=NAME|UID         with --pid=auto: only processes of that user\n"
	      "                          (repeatable: any of them); a UID is the host's; a\n"
	      "                          NAME is the host's name of its uid, or the one its\n"
	      "                          own passwd gives it (a container's users are its own)\n"
	      "  --exe=GLOB              with --pid=auto: only processes whose executable's\n"
	      "                          path or base name matches GLOB (repeatable: any);\n"
	      "                          different options must all match\n"
	      "  --output=DIR            result folder, made absolute and created (0750);\n"
	      "                          default $ASCEND_WORK_PATH/profiling_data, else the\n"
	      "                          current folder. The targets write PROF_* folders there\n"
	      "  --protocol=auto|v1|v2   wire generation; auto (default) decides per target\n"
	      "                          from our agent's variable or the CANN version the\n"
	      "                          target has mapped, else v2\n"
	      "  --timeout=DURATION      per-command timeout per target: 60 (s), 30s, 500ms;\n"
	      "                          default 60 s, as msprof\n"
	      "  --window-max-size=SIZE  largest window folder copied out of a target's own\n"
	      "                          filesystem (its data; sparse holes are free):\n"
	      "                          default 64G; K, M, G, T are powers of 1024\n"
	      "  --window-max-files=N    most files and folders in one window folder copied\n"
	      "                          out of a target's filesystem: default 1000000\n"
	      "  --window-copy-time=DURATION\n"
	      "                          longest a window's copy out of a target's\n"
	      "                          filesystem may take, however the time is spent\n"
	      "                          (it runs beside the loop): default 600 s\n"
	      "  --events=json[:PATH]    also write one JSON object per line for every target\n"
	      "                          joining or leaving, window opening or closing (with\n"
	      "                          its PROF_ folders) and error: to PATH (created or\n"
	      "                          truncated, 0640), else to standard output among the\n"
	      "                          console lines; schema in EVENTS-JSON.md\n"
	      "  --trace=on|off          also write the run as one Chrome Trace Event file,\n"
	      "                          <output>/<dynprof pid>_dynprof_trace.json (Perfetto,\n"
	      "                          chrome://tracing, speedscope): a process per target,\n"
	      "                          its windows, rule firings and errors; with --host-sys\n"
	      "                          its system calls and cpu/mem counters; TRACE.md\n"
	      "  --trace-fold=DURATION   with --trace: system calls shorter than this are\n"
	      "                          counted per 10 ms, not drawn (default 100us; 0: all\n"
	      "                          drawn), and all past 500000 slices\n"
	      "  --window=start=COND[,stop=COND][,repeat=N][,every=DURATION]\n"
	      "                          open and close windows on events, per target\n"
	      "                          (repeatable). COND: open | exec:GLOB |\n"
	      "                          call:LIB:SYMBOL#N | +DURATION | at:TIME |\n"
	      "                          signal:NAME | file:PATH | exit (stop only) |\n"
	      "                          slow:LIB:SYMBOL>LIMIT (a call longer than LIMIT) |\n"
	      "                          gap:LIB:SYMBOL>LIMIT (calls further apart) |\n"
	      "                          stall:LIB:SYMBOL>DURATION (no call for DURATION).\n"
	      "                          LIMIT: 200ms, 500us, 2s... or 3x, 1.5x the typical\n"
	      "                          value; timed in the kernel (quote the rule: '>').\n"
	      "                          Calls are counted in the kernel: start= from the\n"
	      "                          target's join, stop= from the start's trigger;\n"
	      "                          +DURATION from the run's start (start=) or the\n"
	      "                          window's opening (stop=). Without stop= a window\n"
	      "                          lasts until exit or quit. End of input does not\n"
	      "                          end the run: it ends when every rule is done.\n"
	      "                          Examples: start=call:libascendcl.so:aclmdlExecute#1000,\n"
	      "                          stop=call:libascendcl.so:aclmdlExecute#10 ;\n"
	      "                          start=open,stop=+30s ; start=+1m,stop=+10s,every=10m ;\n"
	      "                          start=at:2026-12-01T12:00:00Z,stop=+20s ;\n"
	      "                          'start=slow:libascendcl.so:aclmdlExecute>3x,stop=+5s'\n"
	      "  --commands=FILE         commands from FILE (\"-\": standard input, read\n"
	      "                          whole first) instead of the console: start [SEL],\n"
	      "                          stop [SEL], quit [SEL], status [--json],\n"
	      "                          sleep DURATION, wait COND, window RULE (# comments).\n"
	      "                          SEL: all | pid=N | container=ID|NAME | user=NAME|UID\n"
	      "                          (the targets it matches at that moment; quit SEL\n"
	      "                          lets them go for good); the console takes the same\n"
	      "  --control=SPEC          take commands while running from fifo:CTL[,ACK]\n"
	      "                          or unix:PATH (a plain PATH: an existing FIFO, else\n"
	      "                          a unix socket; only root and dynprof's own uid may\n"
	      "                          connect); each command is answered with\n"
	      "                          \"ack <command>\" or \"error: <why>\"; status's\n"
	      "                          lines come before its ack (STATUS-JSON.md);\n"
	      "                          on a socket, \"events\" turns the connection into a\n"
	      "                          stream of the --events=json lines (also without\n"
	      "                          --events)\n"
	      "  --remote=PATH CMD...    be the client of a running dynprof's\n"
	      "                          --control=unix:PATH: send CMD (its words joined by\n"
	      "                          spaces), print the reply (start, stop, quit: what\n"
	      "                          each target answered); exit 0 on ack, 1 on error: (a\n"
	      "                          target refused, none matched), 2 when PATH cannot\n"
	      "                          be reached or gives no answer within --timeout\n"
	      "                          (default 60 s); start|stop|quit --json: JSON; events\n"
	      "                          streams until Ctrl-C, SIGTERM or dynprof's end\n"
	      "  --no-bpf                do not load BPF: watch target exits with pidfds;\n"
	      "                          forks, execs and exits from the netlink process\n"
	      "                          connector (root), card opens by polling /proc every\n"
	      "                          200 ms (with BPF a card open is known within a\n"
	      "                          millisecond)\n"
	      "  --list                  card-using processes: host pid, pid in its namespace,\n"
	      "                          container, user, cards, socket (path, none or busy),\n"
	      "                          command; then exit\n"
	      "  --watch                 with --list: keep running, one line per change\n"
	      "                          (exec, card-open, card-close, socket, exit) until\n"
	      "                          Ctrl-C or SIGTERM\n"
	      "  --json                  with --list: a JSON array (with --watch: one JSON\n"
	      "                          object per line); schema in LIST-JSON.md\n"
	      "  --device=GLOB           card nodes (repeatable), replacing the defaults\n"
	      "                          /dev/davinci*, /dev/nvidia*, /dev/accel/accel*,\n"
	      "                          /dev/dri/renderD*; the card index is the number\n"
	      "                          that ends the node's name; in launch mode also\n"
	      "                          passed to APP as DYNPROF_AGENT_DEVICES (unless set)\n"
	      "  --slurm-job=J           a whole SLURM job: dynprof runs itself on every node\n"
	      "                          of running job J (srun --jobid=J --overlap, one task\n"
	      "                          per node); each copy takes the job's processes on\n"
	      "                          its node that hold a card and serve a socket\n"
	      "                          (scontrol listpids), with the same switches, rules\n"
	      "                          and console commands; results in --output/<node>/;\n"
	      "                          one summary per node; status 1 if a node failed\n"
	      "  --nodes=A,B,...         the same over a launcher instead of SLURM; each\n"
	      "                          node's targets: --pid (default auto)\n"
	      "  --launcher=TEMPLATE     with --nodes: the command that runs a command on a\n"
	      "                          node, {node} replaced: default 'ssh {node}'; e.g.\n"
	      "                          'pdsh -w {node}', 'kubectl exec -i {node} --'\n"
	      "  --sync-margin=DURATION  with --slurm-job/--nodes: a console start opens on\n"
	      "                          every node at one wall-clock time, now + this\n"
	      "                          (default 500ms; 0: on arrival)\n"
	      "  --node-wait=DURATION    with --slurm-job: how long each node waits for the\n"
	      "                          job's card users to serve their sockets (default 30s)\n"
	      "  --help, -h              this text\n"
	      "  --version               version\n"
	      "\n"
	      "Collection switches (msprof's names and values; each target gets every key\n"
	      "of its generation at msprof's default, then what these set, as msprof sets it):\n"
	      "  --ascendcl --runtime-api --aicpu --hccl --msproftx --l2 --ai-core\n"
	      "  --task-memory --task-tsfw --sys-profiling --sys-pid-profiling   on|off\n"
	      "  --task-time=on|off|l0|l1|l2|l3   --ge-api=off|l0|l1\n"
	      "  --aic-mode=task-based|sample-based   --aic-freq=1..100\n"
	      "  --aic-metrics=PipeUtilization|ArithmeticUtilization|Memory|MemoryL0|MemoryUB|\n"
	      "               ResourceConflictRatio|L2Cache|MemoryAccess|\n"
	      "               PipelineExecuteUtilization|Custom:<hex>,...\n"
	      "  --storage-limit=<N>MB (200..4294967295)   --environment='k=v;k=v'\n"
	      "  --host-sys=cpu,mem,disk,network,osrt,numa   --host-sys-usage=cpu,mem\n"
	      "                          dynprof collects osrt, cpu, mem, disk and network\n"
	      "                          itself; a card user that serves no socket (not\n"
	      "                          started with PROFILING_MODE=dynamic) then gets\n"
	      "                          host-only windows (also in follow and launch\n"
	      "                          mode, 3 s after it opened its card)\n"
	      "  --host-sys-usage-freq=1..50   --host-sys-pid=PID\n"
	      "  --host-sys-before=DURATION\n"
	      "                          with --host-sys: keep each target's host data\n"
	      "                          (osrt, cpu, mem, network, disk) of the last\n"
	      "                          DURATION from its join (1 ms to 60 s; a bounded\n"
	      "                          buffer, drops counted): a window's host data\n"
	      "                          begins that long before its START was sent (a\n"
	      "                          rule's: when it fired)\n"
	      "  --sys-sampling-freq, --sys-pid-sampling-freq=1..10\n"
	      "  --mstx-domain-include, --mstx-domain-exclude=NAMES (with --msproftx=on)\n"
	      "  --model-execution, --type=text|db: accepted, send nothing (as msprof)\n"
	      "  --ai-vector-core, --aiv-*: refused as msprof does, except with --chip=NANO_V1\n"
	      "  --chip=NAME|NUMBER      the chip for the PMU event lists when neither the\n"
	      "                          driver nor a PROF_ folder's info.json in --output says\n"
	      "                          (e.g. 5 or CHIP_V4_1_0 for Ascend 910B)\n"
	      "  --dry-run               print the params JSON as it would be sent (per\n"
	      "                          generation, or per --pid target), connect to nothing\n"
	      "\n"
	      "Console commands (from a terminal, or one per line on standard input):\n"
	      "  start        open a collection window in every target\n"
	      "  stop         close it; each target writes a PROF_* folder\n"
	      "  quit, q      stop what is open, disconnect, exit (end of input: the same,\n"
	      "               but with --window, --control or --follow)\n"
	      "  window RULE  add a rule while running (RULE: a --window value), applied to\n"
	      "               every target from now and to every later joiner from its join\n"
	      "  help, h      this list of commands\n"
	      "The same commands (and sleep, wait) come from --commands and --control; on a\n"
	      "--control socket also \"events\": \"ack events\", then the connection is a\n"
	      "stream of --events=json objects until the client closes (EVENTS-JSON.md).\n"
	      "Ctrl-C, SIGTERM and SIGHUP stop every open window, then quit; in launch mode\n"
	      "the application (its own process group) then gets the same signal.\n"
	      "\n"
	      "With --window, a rule's windows open and close by themselves; see\n"
	      "TRIGGERS.md. The server allows 50 windows per connection: dynprof\n"
	      "reconnects before a window that would pass it.\n"
	      "\n"
	      "Exit status: 0 after quit, end of input or every rule done; 1 when every target was lost;\n"
	      "255 on option errors or when no target could be reached; 128+N after\n"
	      "signal N (--follow: 143 after SIGTERM, 130 after SIGINT); in launch mode,\n"
	      "the application's status.\n"
	      "\n"
	      "The documents named here are docs/ in the source and share/doc/dynprof/\n"
	      "where dynprof is installed (make install); man 8 dynprof has the options.\n",
	      stdout);
}
