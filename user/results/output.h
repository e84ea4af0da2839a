/* SPDX-License-Identifier: MIT */
/*
 * The result folder (--output) and what lands in it: msprof's default and
 * forbidden characters, made absolute, created 0750; the record of the
 * PROF_* folders each window produced.
 *
 * Errors: output_prepare follows convention 3 of docs/ERRORS.md (printed);
 * the others convention 1 (negative errno, the caller prints).
 */
#ifndef DYNPROF_OUTPUT_H
#define DYNPROF_OUTPUT_H

#include <limits.h>
#include <sys/stat.h>
#include <time.h>
#include <stdbool.h>
#include <stddef.h>

#include "shared/compiler.h"

/*
 * The first character msprof forbids in an --output path, or 0 when
 * there is none.
 */
char output_forbidden_char(const char *path);

/* Printable name of a forbidden character, e.g. "'$'" or "tab". */
const char *output_char_name(char c, char *buf, size_t len);

/*
 * Resolve --output (NULL: msprof's default) to an absolute, existing folder,
 * creating missing parts with mode 0750. Prints the one error line and
 * returns -errno on failure.
 */
int output_prepare(const char *given, char *abs, size_t len) DP_MUST_CHECK;

/*
 * PROF_* folders under `dir` written by the process whose pid (in its own
 * namespace) is `nspid` and not yet in `known` (a '\n'-separated list the
 * call extends). Calls found(ctx, name) for each new one. Only real
 * folders count (no symlink, no file of that name).
 *
 * nspid OUTPUT_V1_NAMES: v1 names, which carry no pid
 * (PROF_<6 digits>_<17 digits>_<16 letters A-R>, exactly): the caller
 * tells a window's folder by what appeared between a call before its
 * START (found NULL: a snapshot) and one after its STOP.
 */
#define OUTPUT_V1_NAMES (-1)
int output_new_prof_dirs(const char *dir, int nspid, char **known,
			 void (*found)(void *ctx, const char *name), void *ctx) DP_MUST_CHECK;

/*
 * One entry of a listing done elsewhere (a target's helper): its kind is
 * 0 for a folder, -ELOOP a symlink, -ENOTDIR anything else, -ENOENT gone.
 * found() as above; `dir` only names the folder in a warning. 0 or -ENOMEM.
 */
int output_prof_entry(const char *dir, const char *name, int kind, int nspid, char **known,
		      void (*found)(void *ctx, const char *name), void *ctx) DP_MUST_CHECK;

/*
 * One listing of a folder's PROF_ names (either shape), read once and
 * searched by many targets: output_new_prof_dirs_listed answers as
 * output_new_prof_dirs would for the folder as it was when listed, in
 * O(log n) for a 9.x pid (names kept sorted by their pid part). The
 * listing holds an fd on the folder (each name is checked through it).
 *
 * A listing set aside (output_listing_set_aside) is read again only when
 * the folder changed since: its ctime, which every entry made, removed or
 * renamed moves and no user can set back, against the one seen when it
 * was listed (a ctime within a clock tick of the listing does not count).
 * A follow-mode monitor's --output holds a folder per window ever saved:
 * listing it at every join was the most of a join's time after a day.
 */
struct output_listing {
	char **v2; /* 9.x names, sorted from their pid digits on */
	size_t nv2, v2cap;
	char **v1; /* v1 names */
	size_t nv1, v1cap;
	bool listed; /* all zero: not listed */
	bool aside;  /* not listed, but kept (names and dirfd) for a reuse */
	int dirfd;   /* when listed or aside */
	char dir[PATH_MAX];
	struct stat seen;          /* the folder when it was listed */
	struct timespec listed_at; /* CLOCK_REALTIME as its listing began */
	unsigned reads;            /* folder listings made (taken back ones not counted) */
};
int output_listing_read(struct output_listing *l, const char *dir) DP_MUST_CHECK;
bool output_listing_valid(const struct output_listing *l);
/* Not listed any more (the memory is kept for the next listing). */
void output_listing_forget(struct output_listing *l);
/* Not listed any more, but kept: output_listing_read of the same folder unchanged takes it back. */
void output_listing_set_aside(struct output_listing *l);
void output_listing_free(struct output_listing *l);
int output_new_prof_dirs_listed(const struct output_listing *l, int nspid, char **known,
				void (*found)(void *ctx, const char *name), void *ctx) DP_MUST_CHECK;

/* The names of a `known` list one by one, from *p (the list): false after the last. */
bool output_prof_known_next(const char **p, char *name, size_t len);

/* Take `name` out of a `known` list: 1 when it was there, else 0. */
int output_prof_known_drop(char **known, const char *name);

/* Add `name` to a `known` list (claimed by another target). 0 or -ENOMEM. */
int output_prof_known_add(char **known, const char *name) DP_MUST_CHECK;

/*
 * CANN's exact PROF_ folder name shapes (the one place both are written):
 * v1 PROF_<6 digits>_<17 digits>_<16 letters A-R>, 9.x
 * PROF_<6 digits>_<17 digits>_<8 digits><8 letters A-R>. A name a target
 * made is used only when it matches one.
 */
bool output_is_v1_prof_name(const char *name);
bool output_is_v2_prof_name(const char *name);

/*
 * Open <dir>/<name> to append, for a file dynprof writes in --output (which
 * targets may be able to write): through a directory fd, never following a
 * symlink (dir's last part included), made 0640 with O_EXCL when new; an
 * existing one is used only when it is a regular file of dynprof's euid
 * with one link, else -EPERM. Returns the fd or a negative errno.
 */
int output_open_file(const char *dir, const char *name) DP_MUST_CHECK;

/*
 * The folder <dir>/<name> (one path part, no "." or ".."), made 0750 when
 * missing, through a directory fd; an existing one is used only when it is
 * a real folder (not a symlink) of dynprof's euid, else -EPERM. 0 or a
 * negative errno.
 */
int output_subdir(const char *dir, const char *name) DP_MUST_CHECK;

/*
 * Which target a saved PROF_ folder came from: one JSON line appended to
 * <dir>/<dynprof pid>_dynprof_folders ({"folder": relative to dir, "path":
 * absolute, "pid","nspid","container","command"}), beside msprof's name-only <pid>_profiling_output_record:
 * the folders of a container's pid 1 all end in _00000001, and only this
 * tells which host process, container and command wrote each. 0 or a
 * negative errno.
 */
struct output_origin {
	const char *folder;    /* relative to dir, as in the output record */
	int pid;               /* host pid */
	int nspid;             /* pid in its own namespace (the folder's) */
	const char *container; /* name or id; NULL or "": on the host */
	const char *command;
};
int output_record_origin(const char *dir, const struct output_origin *o) DP_MUST_CHECK;

/* Append a PROF_ folder name to <dir>/<pid>_profiling_output_record. */
int output_record(const char *dir, const char *prof_name) DP_MUST_CHECK;

#endif /* DYNPROF_OUTPUT_H */
