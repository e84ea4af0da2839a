/* SPDX-License-Identifier: MIT */
/*
 * The host's users as its name service gives them (getpwnam/getpwuid:
 * /etc/passwd, LDAP, SSSD... as nsswitch.conf says): the one place user/
 * asks it. A target in a root of its own names its users in its own
 * passwd file instead (read through ns/targetfs.h).
 *
 * Errors: 0, or -ENOENT (no such user, or it has no such field),
 * -ENAMETOOLONG (the answer does not fit), -ENOMEM, or the lookup's own
 * errno negated. The lookup's buffer grows up to HOSTPW_BUF_MAX: a
 * directory entry with huge fields is refused, not followed without end.
 */
#ifndef DYNPROF_HOSTPW_H
#define DYNPROF_HOSTPW_H

#include <stddef.h>
#include <sys/types.h>

#include "shared/compiler.h"

#define HOSTPW_BUF_MAX (1024 * 1024)

/* The uid of the host's user `name`. */
int hostpw_uid(const char *name, uid_t *uid) DP_MUST_CHECK;

/* The host's name of uid. */
int hostpw_name(uid_t uid, char *name, size_t len) DP_MUST_CHECK;

/* The home of uid on the host, trailing '/' cut ("/" stays); -ENOENT when empty. */
int hostpw_home(uid_t uid, char *home, size_t len) DP_MUST_CHECK;

/* The primary group of uid on the host. */
int hostpw_gid(uid_t uid, gid_t *gid) DP_MUST_CHECK;

#endif /* DYNPROF_HOSTPW_H */
