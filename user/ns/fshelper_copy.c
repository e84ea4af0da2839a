// SPDX-License-Identifier: MIT
/*
 * Receiving a folder from a per-target helper into --output (see
 * fshelper_copy() in fshelper.h). The stream is the target's: every path
 * is checked to be plain components below the new folder, every offset
 * and size against what was declared, every byte against the limits.
 * What is written is made here, by dynprof, in a folder it just made:
 * O_EXCL and O_NOFOLLOW throughout, modes without set-id bits or write
 * for others.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "results/copytree.h"
#include "report/escape.h"
#include "ns/fshelper.h"
#include "ns/fshelper_impl.h"

struct recv {
	struct fshelper *h;
	const struct fshelper_limits *lim;
	struct fshelper_copied *done;
	int root;      /* the new folder */
	int file;      /* the file being written, -1 between files */
	uint64_t size; /* its declared size */
};

/* A relative path of plain components, not too deep: 0 or -EPROTO. */
static int check_rel(const char *rel, size_t n)
{
	int depth = 0;
	const char *p = rel;

	if (n < 2 || memchr(rel, '\0', n) != rel + n - 1 || rel[0] == '/')
		return -EPROTO;
	while (*p) {
		const char *e = strchrnul(p, '/');
		size_t len = (size_t)(e - p);

		if (len == 0 || len > 255 || (len == 1 && p[0] == '.') ||
		    (len == 2 && p[0] == '.' && p[1] == '.') || ++depth > FSH_MAX_DEPTH + 1)
			return -EPROTO;
		p = *e ? e + 1 : e;
	}
	return rel[n - 2] == '/' ? -EPROTO : 0;
}

/* The folder holding rel's last part (made earlier in this stream), and that part. */
static int parent_of(int root, char *rel, const char **last)
{
	char *slash = strrchr(rel, '/');
	int fd;

	*last = slash ? slash + 1 : rel;
	if (!slash) {
		fd = fcntl(root, F_DUPFD_CLOEXEC, 0);
		return fd < 0 ? -errno : fd;
	}
	*slash = '\0';
	/* Our own tree, made in this stream: no symlink can be in it, none is followed. */
	fd = openat(root, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	*slash = '/';
	return fd < 0 ? -errno : fd;
}

static int end_file(struct recv *r)
{
	int rc = 0;

	if (r->file < 0)
		return 0;
	/* A hole at the end, or a file that shrank: the declared size all the same. */
	if (ftruncate(r->file, (off_t)r->size))
		rc = -errno;
	if (close(r->file) && rc == 0)
		rc = -errno;
	r->file = -1;
	return rc;
}

static int counted(struct recv *r)
{
	return ++r->done->files > r->lim->max_files ? -EMLINK : 0;
}

static int make_dir(struct recv *r, char *rel, uint64_t mode)
{
	const char *last;
	int rc = end_file(r), p;

	if (rc || (rc = counted(r)))
		return rc;
	p = parent_of(r->root, rel, &last);
	if (p < 0)
		return p;
	rc = mkdirat(p, last, (mode_t)(mode & 0755) | 0700) ? -errno : 0;
	close(p);
	return rc;
}

static int make_file(struct recv *r, char *rel, uint64_t mode, uint64_t size)
{
	const char *last;
	int rc = end_file(r), p;

	if (rc || (rc = counted(r)))
		return rc;
	p = parent_of(r->root, rel, &last);
	if (p < 0)
		return p;
	r->file = openat(p, last, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			 (mode_t)(mode & 0755) | 0600);
	rc = r->file < 0 ? -errno : 0;
	close(p);
	r->size = size;
	return rc;
}

static int write_data(struct recv *r, uint64_t at, size_t n)
{
	const char *p = r->h->buf;

	if (r->file < 0 || at > r->size || n > r->size - at)
		return -EPROTO;
	if ((r->done->bytes += n) > r->lim->max_bytes)
		return -EFBIG;
	while (n) {
		ssize_t w = pwrite(r->file, p, n, (off_t)at);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		at += (uint64_t)w;
		n -= (size_t)w;
	}
	return 0;
}

static void skipped(struct recv *r, const char *rel, int err)
{
	if (r->done->skipped++ == 0) {
		text_escape(rel, r->done->first_skip, sizeof(r->done->first_skip));
		r->done->first_skip_err = err;
	}
}

/* One message of the stream: 0 to go on, 1 at its end, or why it stops. */
static int take(struct recv *r, const struct fsh_msg *m, size_t n)
{
	char *rel = r->h->buf;
	int rc;

	if (m->op == FSH_REP_DONE)
		return m->status < 0 ? m->status : m->status ? -EIO : 1;
	if (m->op == FSH_REP_DATA)
		return write_data(r, m->a, n);
	if ((rc = check_rel(rel, n)))
		return rc;
	if (m->op == FSH_REP_DIR)
		return make_dir(r, rel, m->a);
	if (m->op == FSH_REP_FILE)
		return make_file(r, rel, m->a, m->b);
	if (m->op == FSH_REP_SKIP) {
		skipped(r, rel, m->status);
		return end_file(r);
	}
	return -EPROTO;
}

/* The part made goes; a helper still streaming is told to stop first. */
static int give_up(struct recv *r, int parent, const char *name, int why, bool streaming)
{
	(void)end_file(r);
	if (streaming && why != -ETIMEDOUT && why != -EPIPE && why != -EPROTO &&
	    fsh_send(r->h, FSH_REQ_CANCEL, 0, NULL, 0) == 0 && fsh_done(r->h)) {
		/* Giving up anyway: `why` is what is told; fsh_recv kills a helper that hangs. */
	}
	if (why == -EPROTO)
		fsh_kill(r->h); /* it broke the stream's rules: nothing more from it */
	close(r->root);
	if (copytree_remove(parent, name) < 0) {
		/* Left half made: the caller's line names the folder; nothing else to do. */
	}
	return why;
}

int fshelper_copy(struct fshelper *h, const char *name, int dst_dirfd, const char *dst_name,
		  const struct fshelper_limits *lim, struct fshelper_copied *done)
{
	struct recv r = { .h = h, .lim = lim, .done = done, .file = -1 };
	struct fsh_msg m = { 0 };
	size_t n;
	int rc;

	memset(done, 0, sizeof(*done));
	if (mkdirat(dst_dirfd, dst_name, 0750))
		return -errno;
	r.root = openat(dst_dirfd, dst_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (r.root < 0) {
		rc = -errno;
		unlinkat(dst_dirfd, dst_name, AT_REMOVEDIR);
		return rc;
	}
	rc = fsh_send(h, FSH_REQ_COPY, 0, name, strlen(name) + 1);
	if (rc)
		return give_up(&r, dst_dirfd, dst_name, rc, false);
	for (;;) {
		if (copytree_signal_pending())
			return give_up(&r, dst_dirfd, dst_name, -EINTR, true);
		rc = fsh_recv(h, &m, &n);
		if (rc == 0)
			rc = take(&r, &m, n);
		if (rc == 1)
			break;
		if (rc)
			return give_up(&r, dst_dirfd, dst_name, rc, m.op != FSH_REP_DONE);
	}
	rc = end_file(&r);
	if (rc)
		return give_up(&r, dst_dirfd, dst_name, rc, false);
	close(r.root);
	return 0;
}
