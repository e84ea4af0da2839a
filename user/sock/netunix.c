// SPDX-License-Identifier: MIT
/* Rows of /proc/<pid>/net/unix (see netunix.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sock/netunix.h"

/* A row is ~60 bytes plus a path of at most 108: longer lines are not rows we want. */
#define NETUNIX_LINE_MAX 512
#define NETUNIX_CHUNK 16384

static int digit_value(char c, int base)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (base == 16 && c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (base == 16 && c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Blanks, then at least one digit of `base`; *p moves past the number. */
static int parse_num(const char **p, const char *end, int base, unsigned long *out)
{
	const char *s = *p;
	unsigned long v = 0;
	int n = 0, d;

	while (s < end && *s == ' ')
		s++;
	for (; s < end && (d = digit_value(*s, base)) >= 0; s++, n++) {
		if (v > (~0UL - (unsigned long)d) / (unsigned long)base)
			return -EINVAL;
		v = v * (unsigned long)base + (unsigned long)d;
	}
	if (n == 0)
		return -EINVAL;
	*p = s;
	*out = v;
	return 0;
}

int netunix_parse_row(const char *line, size_t len, struct netunix_row *row)
{
	const char *p = line, *end = line + len;
	unsigned long num, refcnt, proto, type, state;

	/* "Num:" is the socket's address, hashed or zeroed (%pK). */
	if (parse_num(&p, end, 16, &num) || p >= end || *p != ':')
		return -EINVAL;
	p++;
	if (parse_num(&p, end, 16, &refcnt) || parse_num(&p, end, 16, &proto) ||
	    parse_num(&p, end, 16, &row->flags) || parse_num(&p, end, 16, &type) ||
	    parse_num(&p, end, 16, &state) || parse_num(&p, end, 10, &row->inode))
		return -EINVAL;
	row->type = (unsigned)type;
	row->state = (unsigned)state;
	row->path = "";
	row->path_len = 0;
	if (p == end)
		return 0;
	/* One blank, then the address to the end of the line, blanks included. */
	if (*p != ' ' || p + 1 == end)
		return -EINVAL;
	row->path = p + 1;
	row->path_len = (size_t)(end - p - 1);
	return 0;
}

static void add_inode(unsigned long *set, int *n, unsigned long inode)
{
	if (*n < NETUNIX_MAX_INODES)
		set[(*n)++] = inode;
}

int netunix_abstract_key(const struct netunix_row *r, const char *prefix, const char **key, size_t *key_len)
{
	size_t plen = strlen(prefix), klen;

	if (r->path_len < 1 + plen + 1 || r->path[0] != '@' || memcmp(r->path + 1, prefix, plen))
		return -EINVAL;
	klen = r->path_len - 1 - plen;
	if (klen > 16)
		return -EINVAL;
	for (size_t i = 0; i < klen; i++) {
		unsigned char c = (unsigned char)r->path[1 + plen + i];

		/* The kernel shows every NUL of an abstract name as '@'. */
		if (c <= ' ' || c == '@' || c >= 0x7f)
			return -EINVAL;
	}
	*key = r->path + 1 + plen;
	*key_len = klen;
	return 0;
}

/* Line splitting over fixed chunks; a line cut by the buffer end is carried over. */
struct line_reader {
	char buf[NETUNIX_CHUNK];
	size_t used;
	int skipping; /* inside an overlong line: drop up to its '\n' */
};

static int feed_lines(struct line_reader *lr, netunix_fn fn, void *ctx)
{
	size_t start = 0;
	int stop = 0;

	for (;;) {
		char *nl = memchr(lr->buf + start, '\n', lr->used - start);
		struct netunix_row r;

		if (!nl)
			break;
		if (!lr->skipping &&
		    !netunix_parse_row(lr->buf + start, (size_t)(nl - lr->buf) - start, &r))
			stop = fn(ctx, &r);
		lr->skipping = 0;
		start = (size_t)(nl - lr->buf) + 1;
		if (stop)
			return stop;
	}
	memmove(lr->buf, lr->buf + start, lr->used - start);
	lr->used -= start;
	if (lr->used > NETUNIX_LINE_MAX) {
		lr->used = 0;
		lr->skipping = 1;
	}
	return 0;
}

int netunix_scan(int piddir, netunix_fn fn, void *ctx)
{
	/* 16 KiB: off the stack, which listeners' callers may keep small. */
	struct line_reader *lr = malloc(sizeof(*lr));
	int fd, err = 0;

	if (!lr)
		return -ENOMEM;
	lr->used = 0;
	lr->skipping = 0;
	fd = openat(piddir, "net/unix", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(lr);
		return errno == ENOENT ? -ESRCH : -errno;
	}
	while (!err) {
		ssize_t n = read(fd, lr->buf + lr->used, sizeof(lr->buf) - lr->used);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		if (n == 0)
			break;
		lr->used += (size_t)n;
		err = feed_lines(lr, fn, ctx);
	}
	close(fd);
	free(lr);
	return err;
}

struct find_ctx {
	const char *path;
	size_t plen;
	struct netunix_match *out;
};

static int match_row(void *ctx, const struct netunix_row *r)
{
	struct find_ctx *f = ctx;

	if (r->path_len != f->plen || memcmp(r->path, f->path, f->plen))
		return 0;
	if (netunix_is_listener(r))
		add_inode(f->out->listening, &f->out->nlistening, r->inode);
	else if (r->state == NETUNIX_SS_CONNECTED && r->inode)
		add_inode(f->out->connected, &f->out->nconnected, r->inode);
	return 0;
}

int netunix_find(int piddir, const char *path, struct netunix_match *out)
{
	struct find_ctx f = { .path = path, .plen = strlen(path), .out = out };

	memset(out, 0, sizeof(*out));
	return netunix_scan(piddir, match_row, &f);
}
