// SPDX-License-Identifier: MIT
/* The host's users from its name service (see hostpw.h). */
#include <errno.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>

#include "common/hostpw.h"

#define HOSTPW_BUF_FIRST 4096

/*
 * One getpwnam_r (name) or getpwuid_r (else), its buffer grown while the
 * answer does not fit. *buf is the caller's to free when 0 is returned.
 */
static int lookup(const char *name, uid_t uid, struct passwd *pw, char **buf)
{
	size_t size = HOSTPW_BUF_FIRST;

	for (;;) {
		struct passwd *res = NULL;
		char *b = malloc(size);
		int err;

		if (!b)
			return -ENOMEM;
		err = name ? getpwnam_r(name, pw, b, size, &res) : getpwuid_r(uid, pw, b, size, &res);
		if (err == 0 && res) {
			*buf = b;
			return 0;
		}
		free(b);
		if (err != ERANGE || size >= HOSTPW_BUF_MAX)
			return err == ERANGE ? -ENAMETOOLONG : err ? -err : -ENOENT;
		size *= 2;
	}
}

static int copy_out(const char *text, size_t n, char *out, size_t len)
{
	if (n >= len)
		return -ENAMETOOLONG;
	memcpy(out, text, n);
	out[n] = '\0';
	return 0;
}

int hostpw_uid(const char *name, uid_t *uid)
{
	struct passwd pw;
	char *buf;
	int err = lookup(name, 0, &pw, &buf);

	if (err)
		return err;
	*uid = pw.pw_uid;
	free(buf);
	return 0;
}

int hostpw_name(uid_t uid, char *name, size_t len)
{
	struct passwd pw;
	char *buf;
	int err = lookup(NULL, uid, &pw, &buf);

	if (err)
		return err;
	err = pw.pw_name && pw.pw_name[0] ? copy_out(pw.pw_name, strlen(pw.pw_name), name, len) : -ENOENT;
	free(buf);
	return err;
}

int hostpw_home(uid_t uid, char *home, size_t len)
{
	struct passwd pw;
	char *buf;
	size_t n;
	int err = lookup(NULL, uid, &pw, &buf);

	if (err)
		return err;
	n = pw.pw_dir ? strlen(pw.pw_dir) : 0;
	while (n > 1 && pw.pw_dir[n - 1] == '/')
		n--;
	err = n ? copy_out(pw.pw_dir, n, home, len) : -ENOENT;
	free(buf);
	return err;
}

int hostpw_gid(uid_t uid, gid_t *gid)
{
	struct passwd pw;
	char *buf;
	int err = lookup(NULL, uid, &pw, &buf);

	if (err)
		return err;
	*gid = pw.pw_gid;
	free(buf);
	return 0;
}
