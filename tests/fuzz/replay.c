// SPDX-License-Identifier: MIT
/*
 * The driver `make test` links each fuzz harness with (see fuzz.h): feeds
 * it every file of its seed corpus, then, from each seed, a fixed number
 * of deterministic mutations (byte flips, inserts, deletions, repeats,
 * cuts, splices with another seed). The sequence depends only on the
 * seeds, so a failure found here is found again by the next run.
 *
 *   fuzz_NAME [--mutations=N] CORPUS_DIR
 *
 * Prints one line "PASS fuzz_NAME: K inputs" (run.sh counts it); a broken
 * promise aborts, a memory error is ASan's report: both leave no PASS.
 * A FAIL line names the seed and the mutation number when the input could
 * be written: the input is also saved as ./fuzz-failure-NAME.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

#define SEEDS_MAX 256
#define SEED_MAX (64 * 1024)
#define INPUT_MAX (2 * SEED_MAX)

struct seed {
	uint8_t *data;
	size_t len;
};

static struct seed seeds[SEEDS_MAX];
static int nseeds;
static const char *name = "fuzz";
static uint8_t current[INPUT_MAX];
static size_t current_len;

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next_random(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* On abort: keep the input, so the finding can be replayed by hand. */
static void save_current(int sig)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "fuzz-failure-%s", name);
	f = fopen(path, "w");
	if (f) {
		fwrite(current, 1, current_len, f);
		fclose(f);
	}
	printf("FAIL %s: signal %d on an input saved as %s\n", name, sig, path);
	fflush(stdout);
	signal(sig, SIG_DFL);
	raise(sig);
}

static int load_seed(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	size_t n;

	if (!f)
		return -errno;
	buf = malloc(SEED_MAX);
	if (!buf) {
		fclose(f);
		return -ENOMEM;
	}
	n = fread(buf, 1, SEED_MAX, f);
	fclose(f);
	seeds[nseeds].data = buf;
	seeds[nseeds].len = n;
	nseeds++;
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Seeds in name order, so the mutation sequence does not depend on readdir's. */
static int load_corpus(const char *dir)
{
	char *names[SEEDS_MAX];
	int n = 0, rc = 0;
	struct dirent *e;
	DIR *d = opendir(dir);

	if (!d)
		return -errno;
	while ((e = readdir(d)) && n < SEEDS_MAX)
		if (e->d_name[0] != '.')
			names[n++] = strdup(e->d_name);
	closedir(d);
	qsort(names, (size_t)n, sizeof(names[0]), cmp_names);
	for (int i = 0; i < n; i++) {
		char path[4096];

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (!rc)
			rc = load_seed(path);
		free(names[i]);
	}
	return rc;
}

static void run(const uint8_t *data, size_t len)
{
	/* A copy of exactly len bytes: ASan sees any read past the input. */
	uint8_t *copy = malloc(len ? len : 1);

	memcpy(current, data, len);
	current_len = len;
	memcpy(copy, data, len);
	LLVMFuzzerTestOneInput(copy, len);
	free(copy);
}

/* One mutation of `s` into current[]. */
static void mutate(const struct seed *s)
{
	size_t len = s->len, pos;
	uint64_t r = next_random();

	memcpy(current, s->data, len);
	switch (r % 6) {
	case 0: /* flip a few bytes */
		for (int k = 0; k < 1 + (int)(r >> 8) % 4 && len; k++)
			current[next_random() % len] ^= (uint8_t)(1u << (next_random() % 8));
		break;
	case 1: /* insert a byte that parsers care about */
		if (len < INPUT_MAX - 1) {
			static const uint8_t special[] = { 0,   '\n', ' ',  ':', ',',
							   '=', '"',  '\\', '(', ')',
							   '-', '9',  0xff, '@', '/' };
			pos = len ? next_random() % (len + 1) : 0;
			memmove(current + pos + 1, current + pos, len - pos);
			current[pos] = special[next_random() % sizeof(special)];
			len++;
		}
		break;
	case 2: /* delete a span */
		if (len) {
			size_t n = 1 + next_random() % 8;

			pos = next_random() % len;
			if (n > len - pos)
				n = len - pos;
			memmove(current + pos, current + pos + n, len - pos - n);
			len -= n;
		}
		break;
	case 3: /* repeat a span (long fields, many fields) */
		if (len) {
			size_t n = 1 + next_random() % 64;

			pos = next_random() % len;
			if (n > len - pos)
				n = len - pos;
			for (int k = 0; k < 8 && len + n <= INPUT_MAX; k++) {
				memmove(current + pos + n, current + pos, len - pos);
				len += n;
			}
		}
		break;
	case 4: /* cut */
		len = len ? next_random() % len : 0;
		break;
	default: { /* splice: this seed's head, another's tail */
		const struct seed *o = &seeds[next_random() % (uint64_t)nseeds];
		size_t head = len ? next_random() % len : 0;
		size_t from = o->len ? next_random() % o->len : 0;
		size_t tail = o->len - from;

		if (head + tail > INPUT_MAX)
			tail = INPUT_MAX - head;
		memcpy(current + head, o->data + from, tail);
		len = head + tail;
	}
	}
	current_len = len;
}

int main(int argc, char **argv)
{
	long mutations = 2000;
	const char *dir = NULL;
	long total = 0;
	const char *slash = strrchr(argv[0], '/');

	name = slash ? slash + 1 : argv[0];
	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "--mutations=", 12))
			mutations = strtol(argv[i] + 12, NULL, 10);
		else
			dir = argv[i];
	}
	if (!dir) {
		fprintf(stderr, "usage: %s [--mutations=N] CORPUS_DIR\n", name);
		return 2;
	}
	if (load_corpus(dir) < 0 || nseeds == 0) {
		printf("FAIL %s: no seed corpus in %s\n", name, dir);
		return 1;
	}
	signal(SIGABRT, save_current);
	signal(SIGSEGV, save_current);
	signal(SIGBUS, save_current);
	signal(SIGFPE, save_current);
	for (int i = 0; i < nseeds; i++, total++)
		run(seeds[i].data, seeds[i].len);
	for (int i = 0; i < nseeds; i++)
		for (long m = 0; m < mutations; m++, total++) {
			uint8_t input[INPUT_MAX];
			size_t len;

			mutate(&seeds[i]);
			len = current_len;
			memcpy(input, current, len);
			run(input, len);
		}
	printf("PASS %s: %ld inputs (%d seeds, %ld mutations each)\n", name, total, nseeds, mutations);
	for (int i = 0; i < nseeds; i++)
		free(seeds[i].data);
	return 0;
}
