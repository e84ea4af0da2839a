// SPDX-License-Identifier: MIT
/*
 * The /proc text parsers a target controls some of (its comm, its environ,
 * its root's passwd): the first byte picks the parser, the rest is its text.
 */
#include <sys/types.h>

#include "fuzz.h"
#include "common/procstat.h"
#include "proc/procfs.h"
#include "model/procscan.h"

static void status(const char *t)
{
	uid_t uid;
	int nspid, ppid, nspids[8], levels;

	if (procfs_parse_status(t, &uid, &nspid) == 0)
		FUZZ_CHECK(nspid > 0);
	if (procscan_parse_status(t, &ppid, nspids, 8, &levels) == 0)
		FUZZ_CHECK(levels >= 0 && levels <= 8);
}

static void stat_line(const char *t)
{
	struct procstat st;
	char state, comm[16];
	unsigned long long start;

	fuzz_ignore(procstat_parse(t, &st));
	fuzz_ignore(procfs_parse_stat(t, &state, &start));
	if (procscan_parse_comm(t, comm, sizeof(comm)) == 0)
		FUZZ_CHECK(fuzz_terminated(comm, sizeof(comm)));
}

static void passwd(const char *t)
{
	char home[64], names[64];

	uid_t named;

	for (uid_t uid = 0; uid < 3; uid++)
		if (passwd_parse_home(t, uid, home, sizeof(home)) == 0)
			FUZZ_CHECK(fuzz_terminated(home, sizeof(home)));
	/* --user's look-up: a name found has a uid the file wrote as a number. */
	if (passwd_parse_uid(t, "root", &named) == 0)
		FUZZ_CHECK(named <= UINT32_MAX - 1);
	/* The names of a uid: each one passwd_parse_uid gives that uid. */
	if (passwd_parse_names(t, 0, names, sizeof(names)) == 0) {
		FUZZ_CHECK(fuzz_terminated(names, sizeof(names)));
		FUZZ_CHECK(names[0] == ':' && names[strlen(names) - 1] == ':');
		if (passwd_names_have(names, "root"))
			FUZZ_CHECK(passwd_parse_uid(t, "root", &named) == 0 && named == 0);
	}
}

static void environ_block(const uint8_t *data, size_t size)
{
	char out[32];

	/* environ is NUL-separated: the raw bytes, with a length. */
	if (procfs_parse_environ((const char *)data, size, "DYNAMIC_PROFILING_KEY_PID", out,
				 sizeof(out)) == 0)
		FUZZ_CHECK(fuzz_terminated(out, sizeof(out)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *t;
	uid_t inner;

	if (size < 1)
		return 0;
	if (data[0] % 5 == 4) {
		environ_block(data + 1, size - 1);
		return 0;
	}
	t = fuzz_cstr(data + 1, size - 1);
	switch (data[0] % 5) {
	case 0:
		status(t);
		break;
	case 1:
		stat_line(t);
		break;
	case 2:
		passwd(t);
		break;
	default:
		fuzz_ignore(procfs_parse_uid_map(t, 1000, &inner));
		break;
	}
	free(t);
	return 0;
}
