/* SPDX-License-Identifier: MIT */
/*
 * What every fuzz harness shares. A harness is one file, fuzz_<name>.c,
 * defining LLVMFuzzerTestOneInput over one parser (or one family of
 * parsers, chosen by the input's first byte). It is linked two ways:
 * with libFuzzer (`make fuzz`: coverage-guided, minutes per harness) and
 * with replay.c (`make test`: its seed corpus and a fixed set of
 * deterministic mutations of it, under ASan+UBSan with SANITIZE=1).
 *
 * A harness checks what the parser promises (a NUL inside the output
 * buffer, a field within its range) with FUZZ_CHECK, which aborts: the
 * fuzzer and the replay both count an abort as a finding.
 */
#ifndef DYNPROF_FUZZ_H
#define DYNPROF_FUZZ_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: broken promise: %s\n", __FILE__, __LINE__, #cond); \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/* The input as a C string (bytes after a NUL are cut off, as a C caller would see them). */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* Results a harness only needs to survive (the parsers insist they are read). */
static inline void fuzz_ignore(long rc)
{
	(void)rc;
}

/* True when buf[0..len) holds a NUL: what every "copy into buf" promises. */
static inline int fuzz_terminated(const char *buf, size_t len)
{
	return memchr(buf, '\0', len) != NULL;
}

/*
 * For harnesses with temporary files (sockets, folders): `fn` removes them
 * when an input aborts or crashes, and the driver's own handler (replay.c's,
 * libFuzzer's) then keeps the input as usual. Call once, at set-up.
 */
static void (*fuzz_crash_fn)(void);
static struct sigaction fuzz_prev_abrt, fuzz_prev_segv;

static inline void fuzz_crash(int sig)
{
	if (fuzz_crash_fn)
		fuzz_crash_fn();
	fuzz_crash_fn = NULL;
	sigaction(sig, sig == SIGABRT ? &fuzz_prev_abrt : &fuzz_prev_segv, NULL);
	raise(sig); /* delivered to the driver's handler once this one returns */
}

static inline void fuzz_cleanup_on_crash(void (*fn)(void))
{
	struct sigaction sa = { .sa_handler = fuzz_crash };

	fuzz_crash_fn = fn;
	sigaction(SIGABRT, &sa, &fuzz_prev_abrt);
	sigaction(SIGSEGV, &sa, &fuzz_prev_segv);
}

#endif /* DYNPROF_FUZZ_H */
