// SPDX-License-Identifier: MIT
/* Reading in a target's filesystem with its rights (see targetfs.h). */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/rootfile.h"
#include "proc/procfs.h"
#include "ns/targetfs.h"

static bool same_ns(int pid, const char *name)
{
	char path[64];
	struct stat mine, theirs;

	snprintf(path, sizeof(path), "/proc/%d/ns/%s", pid, name);
	if (stat(path, &theirs))
		return false;
	snprintf(path, sizeof(path), "/proc/self/ns/%s", name);
	return stat(path, &mine) == 0 && mine.st_dev == theirs.st_dev && mine.st_ino == theirs.st_ino;
}

bool targetfs_foreign(int pid)
{
	struct proc_creds c;

	if (procfs_read_creds(pid, &c) || c.uid != geteuid())
		return true;
	return !same_ns(pid, "mnt") || !same_ns(pid, "user");
}

bool targetfs_host_side_ok(int pid)
{
	struct proc_creds c;

	return geteuid() != 0 && procfs_read_creds(pid, &c) == 0 && c.uid == geteuid();
}

int targetfs_open(struct targetfs *fs, int pid)
{
	*fs = (struct targetfs){ .pid = pid, .h = NULL };
	fs->rootfd = procfs_open_root(pid);
	if (fs->rootfd < 0)
		return fs->rootfd;
	fs->by_helper = targetfs_foreign(pid);
	return 0;
}

void targetfs_close(struct targetfs *fs)
{
	fshelper_stop(fs->h);
	fs->h = NULL;
	if (fs->rootfd >= 0)
		close(fs->rootfd);
	fs->rootfd = -1;
}

/*
 * The helper, started once; -EPERM when it may not be (its namespaces or
 * its user refuse: fs->why says why). A start that failed for now (it
 * missed its time under load, no memory, no process slot) keeps its own
 * error: as -EPERM it was taken for a refusal, and a container job's
 * socket, whose home its passwd gives, was then never looked for again.
 */
static int helper(struct targetfs *fs)
{
	int rc;

	if (fs->h)
		return 0;
	if (fs->helper_tried)
		return -EPERM;
	fs->helper_tried = true;
	rc = fshelper_start(fs->pid, &fs->h, fs->why, sizeof(fs->why));
	if (rc == 0 || rc == -ESRCH || rc == -ETIMEDOUT || rc == -ETIME || rc == -ENOMEM ||
	    rc == -EAGAIN || rc == -EINTR || rc == -EMFILE || rc == -ENFILE || rc == -EIO ||
	    rc == -EPROTO || rc == -EPIPE)
		return rc;
	return -EPERM;
}

static int read_host_side(struct targetfs *fs, const char *path, size_t max, char **buf, size_t *len)
{
	int fd = rootfile_open(fs->rootfd, path), rc;

	if (fd < 0)
		return fd;
	rc = rootfile_read(fd, max, buf, len);
	close(fd);
	return rc;
}

int targetfs_read(struct targetfs *fs, const char *path, size_t max, char **buf, size_t *len)
{
	int rc;

	if (fs->by_helper) {
		rc = helper(fs);
		if (rc == 0) {
			/* Its "not a regular file" is -EMEDIUMTYPE, which is ROOTFILE_ENOTREG. */
			return fshelper_read(fs->h, path, max, buf, len);
		}
		if (rc == -ESRCH || !targetfs_host_side_ok(fs->pid))
			return rc;
	}
	return read_host_side(fs, path, max, buf, len);
}
