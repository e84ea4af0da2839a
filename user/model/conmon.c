// SPDX-License-Identifier: MIT
/* Rootless podman's container from its conmon (see conmon.h). */
#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/conmon.h"

#define USERNS_DEPTH_MAX 33 /* the kernel nests at most 32 user namespaces */
#define CONMON_ID_LEN 64

/* The next argument at *p in [*p, end): its start and length; false at the end. */
static bool next_arg(const char **p, const char *end, const char **arg, size_t *n)
{
	const char *nul;

	if (*p >= end)
		return false;
	*arg = *p;
	nul = memchr(*p, '\0', (size_t)(end - *p));
	*n = (size_t)((nul ? nul : end) - *p);
	*p = nul ? nul + 1 : end;
	return true;
}

static bool hex_id(const char *s, size_t n)
{
	if (n != CONMON_ID_LEN)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* An option's value: after "-c"/"--cid" as one argument, or glued ("-cID", "--cid=ID"). */
static const char *cid_value(const char *a, size_t n, size_t *vn, bool *next)
{
	*next = (n == 2 && !memcmp(a, "-c", 2)) || (n == 5 && !memcmp(a, "--cid", 5));
	if (*next)
		return NULL;
	if (n > 6 && !memcmp(a, "--cid=", 6)) {
		*vn = n - 6;
		return a + 6;
	}
	if (n > 2 && !memcmp(a, "-c", 2) && a[2] != '-') {
		*vn = n - 2;
		return a + 2;
	}
	return NULL;
}

int conmon_argv_id(const char *argv, size_t n, char *id, size_t len)
{
	const char *p = argv, *end = argv + n, *a, *base, *v;
	size_t k, vn = 0;
	bool take_next = false, next;

	if (len)
		id[0] = '\0';
	if (!next_arg(&p, end, &a, &k))
		return -ENOENT;
	base = memrchr(a, '/', k);
	base = base ? base + 1 : a;
	if ((size_t)(a + k - base) != 6 || memcmp(base, "conmon", 6))
		return -ENOENT;
	while (next_arg(&p, end, &a, &k)) {
		v = take_next ? a : cid_value(a, k, &vn, &next);
		if (take_next)
			vn = k;
		take_next = !take_next && !v && next;
		if (!v)
			continue;
		if (!hex_id(v, vn) || len <= CONMON_ID_LEN)
			return -ENOENT;
		memcpy(id, v, CONMON_ID_LEN);
		id[CONMON_ID_LEN] = '\0';
		return 0;
	}
	return -ENOENT;
}

static bool same_ns(int fd, const struct stat *ns)
{
	struct stat st;

	return !fstat(fd, &st) && st.st_ino == ns->st_ino && st.st_dev == ns->st_dev;
}

int userns_owner(int piddir, uid_t *owner)
{
	struct stat own;
	int fd = openat(piddir, "ns/user", O_RDONLY | O_CLOEXEC), err = -ENOENT;

	if (fd < 0)
		return -errno;
	if (stat("/proc/self/ns/user", &own)) {
		err = -errno;
		close(fd);
		return err;
	}
	/* Up from the process's namespace to the one whose parent is dynprof's. */
	for (int depth = 0; depth < USERNS_DEPTH_MAX && !same_ns(fd, &own); depth++) {
		int parent = ioctl(fd, NS_GET_PARENT);

		if (parent < 0) {
			err = -errno;
			break;
		}
		if (same_ns(parent, &own)) {
			close(parent);
			err = ioctl(fd, NS_GET_OWNER_UID, owner) ? -errno : 0;
			break;
		}
		close(fd);
		fd = parent;
	}
	close(fd);
	return err;
}
