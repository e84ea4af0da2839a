// SPDX-License-Identifier: MIT
/*
 * The small parsers: /proc/<pid>/cgroup (container ids), --device card
 * patterns, strict decimals, an fd link's "socket:[INODE]", a target's
 * DYNAMIC_PROFILING_KEY_PID (read as CANN's stoi: an int32, the same value
 * strtol gives), and the escaping of a target's text before it is printed
 * (printable ASCII only; a cut copy is a prefix of the whole). First
 * byte: which.
 */
#include "fuzz.h"
#include "proc/fdscan.h"
#include "model/container.h"
#include "report/escape.h"
#include "model/procmodel.h"
#include "shared/cannkey.h"
#include "shared/cards.h"
#include "shared/decimal.h"

/* What is printed of a target's text: printable ASCII; cut, a prefix of the whole. */
static void escaped(const char *t, size_t cut)
{
	char *all = text_escape_dup(t), small[32];
	size_t need;

	FUZZ_CHECK(all);
	for (const char *c = all; *c; c++)
		FUZZ_CHECK(*c >= 0x20 && *c < 0x7f);
	FUZZ_CHECK(text_is_plain(t) == !strcmp(all, t));
	need = text_escape(t, small, cut % sizeof(small) + 1);
	FUZZ_CHECK(need == strlen(all));
	FUZZ_CHECK(fuzz_terminated(small, sizeof(small)));
	FUZZ_CHECK(!strncmp(small, all, strlen(small)));
	free(all);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char id[65], *t;
	struct card_patterns p;
	uint64_t u;
	long k;
	int v;

	if (size < 1)
		return 0;
	t = fuzz_cstr(data + 1, size - 1);
	switch (data[0] % 6) {
	case 0:
		procmodel_container_id(t, id, sizeof(id));
		FUZZ_CHECK(fuzz_terminated(id, sizeof(id)));
		break;
	case 1:
		if (cards_parse_patterns(&p, t) == 0) {
			(void)cards_match(&p, "/dev/davinci0");
			cards_free_patterns(&p);
		}
		break;
	case 2:
		if (decimal_u64(t, 5, 1000, &u) == 0)
			FUZZ_CHECK(u >= 5 && u <= 1000);
		if (decimal_int(t, -3, 7, &v) == 0)
			FUZZ_CHECK(v >= -3 && v <= 7);
		break;
	case 3:
		(void)fdscan_socket_inode(t);
		break;
	case 5:
		escaped(t, (size_t)(data[0] >> 3));
		break;
	default:
		if (cann_key_parse(t, &k) == 0) {
			FUZZ_CHECK(k >= INT32_MIN && k <= INT32_MAX);
			FUZZ_CHECK(!*t || strtol(t, NULL, 10) == k);
		}
		break;
	}
	free(t);
	return 0;
}
