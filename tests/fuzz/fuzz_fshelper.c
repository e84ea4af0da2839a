// SPDX-License-Identifier: MIT
/*
 * What a per-target helper sends (ns/fshelper.c, ns/fshelper_copy.c):
 * the helper runs as the target's user, who may have taken it over, so
 * its stream is untrusted. The input is a list of messages written into a
 * real socketpair as the helper's side; the first byte picks the request
 * (a folder copy into a scratch folder, a file read, a listing).
 *
 * Each message: op (32 + byte % 8), status (int8), a and b (u32 each,
 * little-endian), payload length (u16, cut to what is left), payload.
 *
 * Promises: a copy that fails leaves nothing in the scratch folder; one
 * that works made only its own folder, within the limits; a read gives at
 * most its limit; a listing's names are single components.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>

#include "fuzz.h"
#include "results/copytree.h"
#include "ns/fshelper.h"
#include "ns/fshelper_impl.h"

static char scratch[64];

static void remove_scratch(void)
{
	rmdir(scratch);
}

static int scratch_fd(void)
{
	static int fd = -1;

	if (fd < 0) {
		/* tmpfs when there is one: thousands of folders made and removed */
		snprintf(scratch, sizeof(scratch), "%s/dp-fuzz-fsh.XXXXXX",
			 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
		FUZZ_CHECK(mkdtemp(scratch));
		atexit(remove_scratch);
		fd = open(scratch, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		FUZZ_CHECK(fd >= 0);
	}
	return fd;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The messages, as the helper's end would send them; then its end stops writing. */
static void feed(int peer, const uint8_t *d, size_t n)
{
	static uint8_t msg[sizeof(struct fsh_msg) + 4096];

	while (n >= 12) {
		struct fsh_msg m = {
			.op = 32 + d[0] % 8, .status = (int8_t)d[1], .a = le32(d + 2), .b = le32(d + 6)
		};
		size_t plen = (size_t)d[10] | (size_t)d[11] << 8;

		d += 12;
		n -= 12;
		if (plen > n)
			plen = n;
		if (plen > sizeof(msg) - sizeof(m))
			plen = sizeof(msg) - sizeof(m);
		memcpy(msg, &m, sizeof(m));
		memcpy(msg + sizeof(m), d, plen);
		d += plen;
		n -= plen;
		if (send(peer, msg, sizeof(m) + plen, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
			break; /* its buffer is full: the rest is not sent */
	}
	shutdown(peer, SHUT_WR);
}

/* Only "d" may be in the scratch folder, and only when the copy worked. */
static void check_scratch(int root, bool copied)
{
	struct dirent *e;
	DIR *dir = opendir(scratch);
	int others = 0, d = 0;

	FUZZ_CHECK(dir);
	while ((e = readdir(dir)))
		if (!strcmp(e->d_name, "d"))
			d++;
		else if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			others++;
	closedir(dir);
	FUZZ_CHECK(others == 0);
	FUZZ_CHECK(d == (copied ? 1 : 0));
	fuzz_ignore(copytree_remove(root, "d"));
}

static void names(void *ctx, const char *name, int kind)
{
	(void)ctx;
	(void)kind;
	FUZZ_CHECK(name[0] && !strchr(name, '/'));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fshelper h = { .pid = -1 };
	struct fshelper_limits lim = { 1 << 20, 64 };
	struct fshelper_copied done;
	int sv[2], root = scratch_fd(), rc;
	char *buf = NULL;
	size_t len;

	if (size < 1 || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return 0;
	h.chan = sv[0];
	h.buf = malloc(FSH_PAYLOAD_MAX + 1);
	FUZZ_CHECK(h.buf);
	feed(sv[1], data + 1, size - 1);
	switch (data[0] % 3) {
	case 0:
		rc = fshelper_copy(&h, "PROF_x", root, "d", &lim, &done);
		FUZZ_CHECK(rc <= 0);
		FUZZ_CHECK(rc || (done.bytes <= lim.max_bytes && done.files <= lim.max_files));
		FUZZ_CHECK(fuzz_terminated(done.first_skip, sizeof(done.first_skip)));
		check_scratch(root, rc == 0);
		break;
	case 1:
		rc = fshelper_read(&h, "/etc/passwd", 100, &buf, &len);
		FUZZ_CHECK(rc <= 0);
		FUZZ_CHECK(rc || (len <= 100 && buf[len] == '\0'));
		free(buf);
		break;
	default:
		fuzz_ignore(fshelper_list(&h, names, NULL));
	}
	if (h.chan >= 0)
		close(h.chan);
	close(sv[1]);
	free(h.buf);
	return 0;
}
