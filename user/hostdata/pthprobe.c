// SPDX-License-Identifier: MIT
/*
 * --host-sys=osrt's pthread calls: the functions msprof's ltrace list names
 * (DP_OSRT_PTH_FUNCS), probed in the libc the target has mapped, for the
 * span of its window (see hostdata_impl.h, bpf/osrt.bpf.c).
 *
 * The library is the one in the target's /proc/PID/maps, opened as the
 * very file mapped: /proc/PID/map_files/<range> (the kernel's link to the
 * mapping's file, whatever its path now names, in a container or a
 * chroot alike). Where that is refused, by the path the target sees,
 * beneath the target's root (rootfile: absolute symlinks and ".." stay
 * inside a container's root, regular files only), and only when it is the
 * mapped file (maps' device and inode). Both the symbol lookup and the
 * probes then go through that open file (/proc/self/fd/N), never through
 * a path a target could change in between.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/rootfile.h"
#include "hostdata/hostdata_impl.h"
#include "hostdata/osrt.h"
#include "kernel/elfsym.h"
#include "kernel/libmaps.h"
#include "kernel/probeplace.h"

static const char *const pth_names[DP_OSRT_PTH_NFUNCS] = DP_OSRT_PTH_FUNCS;

const char *hd_pth_name(uint32_t nr)
{
	uint32_t i = nr & ~DP_OSRT_PTH_NR;

	return i < DP_OSRT_PTH_NFUNCS ? pth_names[i] : "pthread_unknown";
}

/* The libraries that may define them: glibc before 2.34 has them in libpthread. */
static const char *const pth_libs[] = { "libpthread", "libc" };

struct pth_lib {
	int fd;              /* the mapped library, open (see above); -1: none */
	char path[PATH_MAX]; /* as the target sees it */
	char fdpath[40];     /* /proc/self/fd/<fd> */
};

/* The mapping's own file (map_files: root only), a regular file; fd or -errno. */
static int open_mapped(int pid, const struct libmaps_hit *hit)
{
	char path[96];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%lx-%lx", pid, hit->start, hit->end);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	return rootfile_check_regular(fd < 0 ? -errno : fd);
}

/* fd (or -errno, passed back) when it is the file maps names by device and inode; else closed, -ESTALE. */
static int same_file(int fd, const struct libmaps_hit *hit)
{
	struct stat st;

	if (fd < 0)
		return fd;
	if (fstat(fd, &st) == 0 && st.st_ino == hit->inode && major(st.st_dev) == hit->dev_major &&
	    minor(st.st_dev) == hit->dev_minor)
		return fd;
	close(fd);
	return -ESTALE;
}

/* Open library `lib` as `pid` maps it. 0, or a negative errno with the line in why. */
static int open_lib(int pid, const char *lib, struct pth_lib *out, char *why, size_t len)
{
	struct libmaps_hit *hit = malloc(sizeof(*hit)); /* two PATH_MAX buffers */
	char root[48];
	int rc, rootfd;

	out->fd = -1;
	if (!hit)
		return -ENOMEM;
	rc = libmaps_find(pid, lib, hit);
	if (rc == -ESTALE)
		snprintf(why, len, "%s is mapped from a deleted file: not probed", hit->path);
	if (rc)
		goto out;
	snprintf(out->path, sizeof(out->path), "%s", hit->path);
	rc = open_mapped(pid, hit);
	if (rc < 0) {
		snprintf(root, sizeof(root), "/proc/%d/root", pid);
		rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
		rc = rootfd < 0 ? -errno : same_file(rootfile_open(rootfd, hit->path), hit);
		if (rootfd >= 0)
			close(rootfd);
	}
	if (rc < 0) {
		snprintf(why, len, "%s in pid %d's root: %s", hit->path, pid,
			 rc == -ESTALE ? "not the file it maps" : rootfile_strerror(rc));
		goto out;
	}
	out->fd = rc;
	snprintf(out->fdpath, sizeof(out->fdpath), "/proc/self/fd/%d", rc);
	rc = 0;
out:
	free(hit);
	return rc;
}

/* Attach function i in the first library that defines it. 0, or -errno with why. */
static int attach_one(struct hd_window *w, struct pth_lib *libs, unsigned i, char *why, size_t len)
{
	char line[256];
	struct elfsym sym;
	int rc = -ENOENT;

	for (size_t l = 0; l < sizeof(pth_libs) / sizeof(pth_libs[0]); l++) {
		uint64_t at;

		if (libs[l].fd < 0)
			continue;
		rc = elfsym_find(libs[l].fdpath, pth_names[i], &sym, line, sizeof(line));
		if (rc == -ENOENT)
			continue;
		if (rc) {
			snprintf(why, len, "%s in %s: %s", pth_names[i], libs[l].path, strerror(-rc));
			return rc;
		}
		/* Where the kernel emulates the trap (probeplace.h): one per probe hit, not a single-step. */
		at = sym.offset + (sym.code_len ? probeplace_skip(sym.code, sym.code_len, sym.size) : 0);
		rc = osrt_pth_attach(w->pid, libs[l].fdpath, at, i, w->pth_links[i], line, sizeof(line));
		if (rc)
			snprintf(why, len, "%s in %s: %s", pth_names[i], libs[l].path, line);
		else
			snprintf(w->pth_lib, sizeof(w->pth_lib), "%s", libs[l].path);
		return rc;
	}
	snprintf(why, len, "no %s in the libraries pid %d maps", pth_names[i], w->pid);
	return rc;
}

void hd_pth_attach(struct hd_window *w)
{
	struct pth_lib libs[sizeof(pth_libs) / sizeof(pth_libs[0])];
	char why[PATH_MAX + 320] = "", open_why[PATH_MAX + 320] = "";
	int found = 0;

	/* A library that cannot be opened matters only when no other defines them. */
	for (size_t l = 0; l < sizeof(libs) / sizeof(libs[0]); l++)
		if (!open_lib(w->pid, pth_libs[l], &libs[l], open_why, sizeof(open_why)))
			found++;
	if (!found)
		snprintf(why, sizeof(why), "%s", open_why[0] ? open_why : "the process maps no libc");
	for (unsigned i = 0; found && i < DP_OSRT_PTH_NFUNCS; i++)
		if (attach_one(w, libs, i, why, sizeof(why)))
			break;
	if (why[0] && found) /* all or none: a partial list would read as calls not made */
		hd_pth_detach(w);
	if (why[0])
		snprintf(w->pth_why, sizeof(w->pth_why), "%s", why);
	for (size_t l = 0; l < sizeof(libs) / sizeof(libs[0]); l++)
		if (libs[l].fd >= 0)
			close(libs[l].fd); /* the probes hold the file's inode */
}

void hd_pth_detach(struct hd_window *w)
{
	for (unsigned i = 0; i < DP_OSRT_PTH_NFUNCS; i++)
		osrt_pth_detach(w->pid, w->pth_links[i]);
}
