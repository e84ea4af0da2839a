// SPDX-License-Identifier: MIT
/* A process's executable file mappings (see procmaps.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kernel/libmaps.h"
#include "proc/procmaps.h"

#define MAPS_LINE_BUF 16384                /* longer lines (none exist) are skipped */
#define MAPS_MAX_BYTES (64L * 1024 * 1024) /* stop reading a pathological maps here */
#define MAPS_MAX_QUERIES (1L << 20) /* ... and asking of one here (the kernel's limit is 65530) */

static int open_maps(int pid)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd >= 0 ? fd : errno == ENOENT ? -ESRCH : -errno;
}

/* A path past PATH_MAX is left out, as the ioctl leaves it to the text: no library of interest has one. */
static bool one_line(char *line, procmaps_file_fn fn, void *arg)
{
	struct libmaps_line m;

	if (libmaps_parse_line(line, &m) && m.executable && strlen(m.path) < PATH_MAX)
		return fn(m.path, arg);
	return true;
}

/* Complete lines of buf[0, *used) to one_line; the rest kept at the front. False: the caller knows enough. */
static bool take_lines(char *buf, size_t *used, int *skipping, procmaps_file_fn fn, void *arg)
{
	size_t start = 0;
	char *nl;

	while ((nl = memchr(buf + start, '\n', *used - start))) {
		*nl = '\0';
		if (!*skipping && !one_line(buf + start, fn, arg))
			return false;
		*skipping = 0;
		start = (size_t)(nl - buf) + 1;
	}
	memmove(buf, buf + start, *used - start);
	*used -= start;
	if (*used == MAPS_LINE_BUF - 1) {
		*skipping = 1; /* drop the rest of an overlong line */
		*used = 0;
	}
	return true;
}

int procmaps_exec_files_text(int pid, procmaps_file_fn fn, void *arg)
{
	int fd = open_maps(pid), skipping = 0, err = 0;
	size_t used = 0;
	long total = 0;
	char *buf;

	if (fd < 0)
		return fd;
	buf = malloc(MAPS_LINE_BUF);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (total < MAPS_MAX_BYTES) {
		ssize_t n = read(fd, buf + used, MAPS_LINE_BUF - 1 - used);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		if (n == 0) {
			buf[used] = '\0';
			if (used && !skipping)
				one_line(buf, fn, arg);
			break;
		}
		total += n;
		used += (size_t)n;
		if (!take_lines(buf, &used, &skipping, fn, arg))
			break;
	}
	free(buf);
	close(fd);
	return err;
}

/*
 * PROCMAP_QUERY (include/uapi/linux/fs.h since Linux 6.11): the mapping
 * at or after an address, filtered in the kernel. A fixed ABI, declared
 * here since the build's headers may be older than the kernel it runs on.
 */
struct dp_procmap_query {
	uint64_t size;
	uint64_t query_flags;
	uint64_t query_addr;
	uint64_t vma_start;
	uint64_t vma_end;
	uint64_t vma_flags;
	uint64_t vma_page_size;
	uint64_t vma_offset;
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	uint32_t vma_name_size;
	uint32_t build_id_size;
	uint64_t vma_name_addr;
	uint64_t build_id_addr;
};
_Static_assert(sizeof(struct dp_procmap_query) == 104, "PROCMAP_QUERY's struct is 104 bytes");
#define DP_PROCMAP_QUERY _IOWR('f', 17, struct dp_procmap_query)
#define DP_PMQ_EXECUTABLE 0x04
#define DP_PMQ_COVERING_OR_NEXT 0x10
#define DP_PMQ_FILE_BACKED 0x20

/* The path the kernel wrote (name_size counts its NUL), as the text would show it; fn's answer. */
static bool query_path(char *name, uint32_t name_size, procmaps_file_fn fn, void *arg)
{
	if (name_size == 0 || name_size > PATH_MAX)
		return true;
	name[name_size - 1] = '\0';
	libmaps_cut_deleted(name);
	return name[0] != '/' || fn(name, arg);
}

int procmaps_exec_files_query(int pid, procmaps_file_fn fn, void *arg)
{
	int fd = open_maps(pid), err = 0;
	char *name = malloc(PATH_MAX);
	uint64_t addr = 0;

	if (fd < 0 || !name) {
		free(name);
		if (fd >= 0)
			close(fd);
		return fd < 0 ? fd : -ENOMEM;
	}
	for (long i = 0; i < MAPS_MAX_QUERIES; i++) {
		struct dp_procmap_query q = {
			.size = sizeof(q),
			.query_flags = DP_PMQ_COVERING_OR_NEXT | DP_PMQ_FILE_BACKED | DP_PMQ_EXECUTABLE,
			.query_addr = addr,
			.vma_name_addr = (uint64_t)(uintptr_t)name,
			.vma_name_size = PATH_MAX,
		};

		if (ioctl(fd, DP_PROCMAP_QUERY, &q) < 0) {
			/*
			 * ENOENT: no more. ENOTTY: a kernel before it. EINVAL
			 * (flags it does not know) and ENAMETOOLONG (a path past
			 * PATH_MAX, which the text skips) are the text's too.
			 */
			err = errno == ENOENT                          ? 0 :
			      errno == EINVAL || errno == ENAMETOOLONG ? -ENOTTY :
									 -errno;
			break;
		}
		if (q.vma_end <= addr) {
			err = -ENOTTY; /* no progress: not the answer this code knows */
			break;
		}
		if (!query_path(name, q.vma_name_size, fn, arg))
			break;
		addr = q.vma_end;
	}
	free(name);
	close(fd);
	return err;
}

int procmaps_exec_files(int pid, procmaps_file_fn fn, void *arg)
{
	int err = procmaps_exec_files_query(pid, fn, arg);

	return err == -ENOTTY ? procmaps_exec_files_text(pid, fn, arg) : err;
}
