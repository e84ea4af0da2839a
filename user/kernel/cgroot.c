// SPDX-License-Identifier: MIT
/* The cgroup v2 root, mounted privately (see cgroot.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "kernel/cgroot.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

/* Inode of the initial cgroup namespace, fixed by the kernel (proc_ns.h). */
#define PROC_CGROUP_INIT_INO 0xEFFFFFFBU

/* 1 in the host's cgroup namespace, 0 in another, or negative errno. */
static int host_cgroup_ns(void)
{
	struct stat self;

	if (stat("/proc/self/ns/cgroup", &self))
		return errno == ENOENT ? 1 : -errno; /* no cgroup namespaces (< 4.6): the host's */
	return self.st_ino == PROC_CGROUP_INIT_INO;
}

/* An fd of the initial cgroup namespace, from the first process found in it; or -1. */
static int open_host_cgroup_ns(void)
{
	DIR *proc = opendir("/proc");
	struct dirent *de;
	int fd = -1;

	while (proc && fd < 0 && (de = readdir(proc))) {
		char path[64];
		struct stat st;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%.20s/ns/cgroup", de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0 && (fstat(fd, &st) || st.st_ino != PROC_CGROUP_INIT_INO)) {
			close(fd);
			fd = -1;
		}
	}
	if (proc)
		closedir(proc);
	return fd;
}

int cgroot_join_host_ns(void)
{
	int fd, err;

	if (host_cgroup_ns() != 0 || geteuid() != 0)
		return 0;
	fd = open_host_cgroup_ns();
	if (fd < 0)
		return 0;
	err = setns(fd, CLONE_NEWCGROUP) ? -errno : 1;
	close(fd);
	return err;
}

int cgroot_fsmount_root(int fs, unsigned int attrs, int flags)
{
#if defined(SYS_fsmount)
	int mnt = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, attrs), fd;

	close(fs);
	if (mnt < 0)
		return -errno;
	fd = openat(mnt, ".", flags | O_DIRECTORY | O_CLOEXEC);
	fd = fd < 0 ? -errno : fd;
	close(mnt);
	return fd;
#else
	close(fs);
	(void)attrs;
	(void)flags;
	return -ENOSYS;
#endif
}

/* 1: a mount in no folder. The mount fd is O_PATH-like: open its root for real. */
static int by_fsmount(void)
{
#if defined(SYS_fsopen) && defined(SYS_fsmount) && defined(SYS_fsconfig)
	int fs, fd;

	fs = (int)syscall(SYS_fsopen, "cgroup2", FSOPEN_CLOEXEC);
	if (fs < 0)
		return -errno;
	if (syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		fd = -errno;
		close(fs);
		return fd;
	}
	return cgroot_fsmount_root(fs, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, O_RDONLY);
#else
	return -ENOSYS;
#endif
}

/* 2: mount(2) on a private folder, for the time of one open. */
static int by_mount(void)
{
	char dir[] = "/tmp/dynprof-cgroup2.XXXXXX";
	int fd;

	if (!mkdtemp(dir))
		return -errno;
	if (mount("cgroup2", dir, "cgroup2", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL)) {
		fd = -errno;
		rmdir(dir);
		return fd;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		fd = -errno;
	umount2(dir, MNT_DETACH);
	rmdir(dir);
	return fd;
}

/* 3: a cgroup2 mount where systemd hosts put one (its root: we are in the initial cgroup namespace). */
static int by_known_mount(void)
{
	static const char *const paths[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		struct statfs sfs;
		int fd = open(paths[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (fd < 0)
			continue;
		if (fstatfs(fd, &sfs) == 0 && sfs.f_type == CGROUP2_SUPER_MAGIC)
			return fd;
		close(fd);
	}
	return -ENOENT;
}

int cgroot_open(char *why, size_t why_len)
{
	int same = host_cgroup_ns(), fd, err1, err2;

	if (same < 0) {
		snprintf(why, why_len, "cannot read /proc/self/ns/cgroup: %s", strerror(-same));
		return same;
	}
	if (!same) {
		snprintf(why, why_len, "dynprof is in a cgroup namespace of its own, not the host's");
		return -EXDEV;
	}
	fd = err1 = by_fsmount();
	if (fd >= 0)
		return fd;
	fd = err2 = by_mount();
	if (fd >= 0)
		return fd;
	fd = by_known_mount();
	if (fd >= 0)
		return fd;
	snprintf(why, why_len, "cannot mount cgroup2 (fsmount: %s; mount: %s) and none found",
		 strerror(-err1), strerror(-err2));
	return err2;
}
