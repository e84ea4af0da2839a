// SPDX-License-Identifier: MIT
/* Which wire generation a target speaks (see protodetect.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "proc/procfs.h"
#include "proc/procmaps.h"
#include "ns/targetfs.h"
#include "session/protodetect.h"
#include "common/errbuf.h"
#include "shared/decimal.h"
#include "shared/array_size.h"

#define MAX_ROOTS 4 /* distinct toolkit roots examined */
#define VERSION_FILE_MAX (64 * 1024)
/* v2 starts with CANN 8.5.0; msprof up to the 8.3.0 branch speaks v1 (docs/PROTOCOL.md). */
#define VERSION_MAJOR_V2 8
#define VERSION_MINOR_V2 5

/* ---- pure parts ------------------------------------------------------------- */

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* `name` starts with `lib` and then ends or goes on with '.' (".so.1"). */
static int is_lib(const char *name, const char *lib)
{
	size_t n = strlen(lib);

	return !strncmp(name, lib, n) && (name[n] == '\0' || name[n] == '.');
}

/* Does some folder of `path` end in "-linux" (x86_64-linux, aarch64-linux)? */
static const char *arch_component(const char *path, size_t *clen)
{
	const char *found = NULL, *s = path;

	for (;;) {
		const char *e;

		while (*s == '/')
			s++;
		e = strchr(s, '/');
		if (!e)
			break; /* the last component is the file itself */
		if (e - s > 6 && !memcmp(e - 6, "-linux", 6)) {
			found = s;
			*clen = (size_t)(e - s);
		}
		s = e;
	}
	return found;
}

int protodetect_path_arch(const char *lib_path, char *arch, size_t len)
{
	size_t clen = 0;
	const char *a = lib_path ? arch_component(lib_path, &clen) : NULL;

	if (!a)
		return -ENOENT;
	if (clen >= len)
		return -ENAMETOOLONG;
	memcpy(arch, a, clen);
	arch[clen] = '\0';
	return 0;
}

int protodetect_is_profimpl_lib(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "libprofimpl.so", 14) && (base[14] == '\0' || base[14] == '.');
}

int protodetect_is_agent_lib(const char *path)
{
	return !strncmp(base_name(path), "libdynprof_agent", 16);
}

int protodetect_is_cann_lib(const char *path)
{
	const char *name = base_name(path);
	size_t clen;

	/* The driver has its own version numbers (23.0.0...), not CANN's. */
	if (strstr(path, "/driver/"))
		return 0;
	if (is_lib(name, "libascendcl.so") || is_lib(name, "libmsprofiler.so") ||
	    is_lib(name, "libprofapi.so"))
		return 1;
	/* A generic name: only inside a toolkit layout. */
	if (is_lib(name, "libruntime.so"))
		return arch_component(path, &clen) || strcasestr(path, "ascend") ||
		       strcasestr(path, "/cann");
	return 0;
}

/* Package folders that hold their own lib64 inside a toolkit version folder. */
static const char *const package_dirs[] = {
	"runtime", "compiler", "acllib", "fwkacllib", "atc", "toolkit", "tools", "opp",
};

int protodetect_toolkit_root(const char *lib_path, char *root, size_t len)
{
	const char *end = NULL, *s;
	size_t clen, rl;

	if (!lib_path || lib_path[0] != '/')
		return -ENOENT;
	end = arch_component(lib_path, &clen);
	if (!end) {
		/* The last "lib64" folder, then one package folder up if it is one. */
		for (s = lib_path;;) {
			const char *e;

			while (*s == '/')
				s++;
			e = strchr(s, '/');
			if (!e)
				break;
			if (e - s == 5 && !memcmp(s, "lib64", 5))
				end = s;
			s = e;
		}
		if (!end)
			return -ENOENT;
		rl = (size_t)(end - lib_path);
		while (rl > 1 && lib_path[rl - 1] == '/')
			rl--;
		for (size_t i = 0; i < ARRAY_SIZE(package_dirs); i++) {
			size_t pl = strlen(package_dirs[i]);

			if (rl > pl + 1 && lib_path[rl - pl - 1] == '/' &&
			    !memcmp(lib_path + rl - pl, package_dirs[i], pl)) {
				end = lib_path + rl - pl;
				break;
			}
		}
	}
	rl = (size_t)(end - lib_path);
	while (rl > 1 && lib_path[rl - 1] == '/')
		rl--;
	if (rl <= 1)
		return -ENOENT; /* a toolkit at "/" is not a toolkit layout */
	if (rl >= len)
		return -ENAMETOOLONG;
	memcpy(root, lib_path, rl);
	root[rl] = '\0';
	return 0;
}

static void trim(const char **s, const char **e)
{
	while (*s < *e && (**s == ' ' || **s == '\t'))
		(*s)++;
	while (*e > *s && ((*e)[-1] == ' ' || (*e)[-1] == '\t' || (*e)[-1] == '\r'))
		(*e)--;
}

static int key_is(const char *s, const char *e, const char *key)
{
	size_t n = strlen(key);

	return (size_t)(e - s) == n && !strncasecmp(s, key, n);
}

static int key_ends_with(const char *s, const char *e, const char *suffix)
{
	size_t n = strlen(suffix);

	return (size_t)(e - s) > n && !strncasecmp(e - n, suffix, n);
}

int protodetect_parse_version(const char *text, char *version, size_t len)
{
	const char *best = NULL, *best_end = NULL, *line = text;
	int best_rank = 3;
	uint64_t major;
	const char *s, *e;

	if (len)
		version[0] = '\0';
	while (line && *line) {
		const char *eol = strchr(line, '\n');
		const char *end = eol ? eol : line + strlen(line);
		const char *eq = memchr(line, '=', (size_t)(end - line));
		const char *ks = line, *ke = eq, *vs, *ve = end;
		int rank;

		line = eol ? eol + 1 : NULL;
		if (!eq)
			continue;
		trim(&ks, &ke);
		if (ks < ke && *ks == '#')
			continue;
		if (key_is(ks, ke, "version"))
			rank = 0;
		else if (key_is(ks, ke, "runtime_running_version"))
			rank = 1;
		else if (key_ends_with(ks, ke, "_running_version"))
			rank = 2;
		else
			continue;
		if (rank >= best_rank)
			continue;
		vs = eq + 1;
		trim(&vs, &ve);
		best = vs;
		best_end = ve;
		best_rank = rank;
		if (rank == 0)
			break;
	}
	if (!best)
		return -1;

	s = best;
	e = best_end;
	/* Quotes and brackets around: "8.0.RC1", [7.3.0.1.231:8.0.RC2] */
	while (s < e && (*s == '"' || *s == '\'' || *s == '['))
		s++;
	while (e > s && (e[-1] == '"' || e[-1] == '\'' || e[-1] == ']'))
		e--;
	/* [<inner component version>:<CANN version>]: the CANN one. */
	for (const char *c = e; c > s; c--) {
		if (c[-1] == ':') {
			s = c;
			break;
		}
	}
	trim(&s, &e);
	if (e - s > 5 && !strncasecmp(s, "CANN-", 5))
		s += 5;
	if (len)
		snprintf(version, len, "%.*s", (int)(e - s), s);
	/* A major beyond any CANN's is no version either. */
	return decimal_prefix(s, (size_t)(e - s), 1000000, &major, NULL) ? -1 : (int)major;
}

/* The number that begins *c, advancing past it; -1 when none, or one too long for any CANN. */
static int leading_number(const char **c)
{
	uint64_t v;
	size_t used;

	if (decimal_prefix(*c, SIZE_MAX, 1000000, &v, &used))
		return -1;
	*c += used;
	return (int)v;
}

enum proto_version protodetect_for_version(const char *version)
{
	const char *c = version;
	int major, minor = 0;

	/* No number, or one too long for any CANN: the default. */
	if (!version)
		return PROTO_V2;
	major = leading_number(&c);
	if (major < 0)
		return PROTO_V2;
	if (*c == '.') {
		c++;
		minor = leading_number(&c);
		if (minor < 0) /* "8.RC1": no minor number, taken as 0 */
			minor = 0;
	}
	if (major != VERSION_MAJOR_V2)
		return major < VERSION_MAJOR_V2 ? PROTO_V1 : PROTO_V2;
	return minor < VERSION_MINOR_V2 ? PROTO_V1 : PROTO_V2;
}

/* ---- reading the target ---------------------------------------------------------- */

struct toolkit {
	char root[PATH_MAX];
	char arch[64]; /* "" when the library path did not show one */
};

struct maps_scan {
	bool enough_at_profimpl; /* libprofimpl.so decides: no agent could say v1 */
	int agent;
	int profimpl; /* libprofimpl.so: where every v2 server is compiled in */
	int cann;     /* CANN libraries seen (with or without a usable root) */
	int nroots;
	struct toolkit roots[MAX_ROOTS];
};

/*
 * One executable file mapping of the target (procmaps.h: a file may come
 * twice); false once the rest cannot change the answer. The walk costs the
 * kernel a call per executable mapping (a PyTorch process has hundreds:
 * docs/BENCHMARKS.md), and it goes up the address space, where the
 * libraries loaded last (a framework's plugin and the CANN libraries it
 * pulls in) come first.
 */
static bool maps_file(const char *path, void *arg)
{
	struct maps_scan *m = arg;
	struct toolkit *t;

	if (protodetect_is_agent_lib(path)) {
		m->agent = 1;
		return false; /* step 1 below: nothing else counts */
	}
	if (protodetect_is_profimpl_lib(path)) {
		m->profimpl = 1;
		/* v2, unless our agent (mapped further up) was told v1. */
		if (m->enough_at_profimpl)
			return false;
	}
	if (!protodetect_is_cann_lib(path))
		return true;
	m->cann = 1;
	if (m->nroots == MAX_ROOTS)
		return true;
	t = &m->roots[m->nroots];
	if (protodetect_toolkit_root(path, t->root, sizeof(t->root)))
		return true;
	for (int i = 0; i < m->nroots; i++)
		if (!strcmp(m->roots[i].root, t->root))
			return true;
	if (protodetect_path_arch(path, t->arch, sizeof(t->arch)))
		t->arch[0] = '\0';
	m->nroots++;
	return true;
}

/* Read one version file inside the target's root: the major or -1. */
static int version_at(struct targetfs *fs, const char *file, char *version, size_t len)
{
	char *text;
	size_t n;
	int major;

	if (targetfs_read(fs, file, VERSION_FILE_MAX, &text, &n))
		return -1;
	major = protodetect_parse_version(text, version, len);
	free(text);
	return major;
}

/*
 * The version files of one toolkit root, most specific first:
 * <arch>-linux/ascend_toolkit_install.info (toolkit, also cann-8.5 layouts),
 * <arch>-linux/ascend_nnrt_install.info, ascend_nnae_install.info, version.cfg.
 */
static int toolkit_version(struct targetfs *fs, const struct toolkit *t, char *version, size_t vlen,
			   char *file, size_t flen)
{
	static const char *const archs[] = { "x86_64-linux", "aarch64-linux" };
	static const char *const arch_files[] = { "ascend_toolkit_install.info",
						  "ascend_nnrt_install.info" };
	static const char *const root_files[] = { "ascend_nnae_install.info", "version.cfg" };
	int major;

	for (size_t a = 0; a < 2; a++) {
		const char *arch = t->arch[0] ? t->arch : archs[a];

		for (size_t f = 0; f < 2; f++) {
			snprintf(file, flen, "%s/%s/%s", t->root, arch, arch_files[f]);
			major = version_at(fs, file, version, vlen);
			if (major >= 0)
				return major;
		}
		if (t->arch[0])
			break;
	}
	for (size_t f = 0; f < 2; f++) {
		snprintf(file, flen, "%s/%s", t->root, root_files[f]);
		major = version_at(fs, file, version, vlen);
		if (major >= 0)
			return major;
	}
	return -1;
}

enum proto_version protodetect(int pid, char *why, size_t whylen)
{
	char env[32], version[64], file[PATH_MAX + 64], dummy[8];
	struct maps_scan *m;
	int env_rc, maps_rc, major = -1;
	struct targetfs fs;
	enum proto_version v;

	if (!why || whylen == 0) {
		why = dummy;
		whylen = sizeof(dummy);
	}
	env_rc = procfs_environ_get(pid, PROTODETECT_AGENT_ENV, env, sizeof(env));
	m = calloc(1, sizeof(*m));
	if (!m) {
		errbuf_set(why, whylen, "out of memory: v2");
		return PROTO_V2;
	}
	/* Only what is mapped executable: a loaded library has its code mapped so. */
	m->enough_at_profimpl = !(env_rc == 0 && !strcmp(env, "v1"));
	maps_rc = procmaps_exec_files(pid, maps_file, m);

	/* 1. our agent, mapped */
	if (m->agent) {
		free(m);
		if (env_rc == 0 && !strcmp(env, "v1")) {
			errbuf_set(why, whylen, "dynprof agent, %s=v1: v1", PROTODETECT_AGENT_ENV);
			return PROTO_V1;
		}
		if (env_rc == 0 || env_rc == -ERANGE)
			errbuf_set(why, whylen, "dynprof agent, %s=%s: v2", PROTODETECT_AGENT_ENV, env);
		else
			errbuf_set(why, whylen, "dynprof agent, %s unset: v2", PROTODETECT_AGENT_ENV);
		return PROTO_V2;
	}

	/*
	 * 2a. the v2 server's library. Both v2 code lines (8.5.0 and 9.x) build
	 * the server into libprofimpl; v1 trees have no such library (the v1
	 * server is in libmsprofiler). Its absence proves nothing: it may load later.
	 */
	if (m->profimpl) {
		free(m);
		errbuf_set(why, whylen, "libprofimpl.so mapped (the v2 server's library): v2");
		return PROTO_V2;
	}

	/* 2b. the CANN toolkit it runs */
	/* Read with the target's rights (its helper), one helper for every file of this look. */
	if (m->nroots && targetfs_open(&fs, pid) == 0) {
		for (int i = 0; i < m->nroots && major < 0; i++)
			major = toolkit_version(&fs, &m->roots[i], version, sizeof(version), file,
						sizeof(file));
		targetfs_close(&fs);
	}
	if (major >= 0) {
		free(m);
		v = protodetect_for_version(version);
		errbuf_set(why, whylen, "CANN %s (%s): %s", version, file, proto_version_name(v));
		return v;
	}

	/*
	 * 1b. our agent linked statically: only its variable shows. Checked after
	 * CANN so a variable leaked into a real CANN process does not mislead.
	 */
	if (env_rc == 0 || env_rc == -ERANGE) {
		v = !strcmp(env, "v1") ? PROTO_V1 : PROTO_V2;
		errbuf_set(why, whylen, "%s=%s (dynprof agent linked in): %s",
			   PROTODETECT_AGENT_ENV, env, proto_version_name(v));
		free(m);
		return v;
	}

	/* 3. the current generation */
	if (m->nroots)
		errbuf_set(why, whylen, "CANN at %s, but no version file readable there: v2",
			   m->roots[0].root);
	else if (m->cann)
		errbuf_set(why, whylen, "CANN libraries outside a toolkit layout, no version found: v2");
	else if (maps_rc)
		errbuf_set(why, whylen, "cannot read /proc/%d/maps (%s), no CANN version found: v2",
			   pid, strerror(-maps_rc));
	else
		errbuf_set(why, whylen, "no CANN version found: v2");
	free(m);
	return PROTO_V2;
}
