// SPDX-License-Identifier: MIT
/*
 * One listing of --output for many targets (output_new_prof_dirs_listed)
 * finds exactly what a listing per target (output_new_prof_dirs) finds:
 * per 9.x pid, v1 names, known names skipped, symlinks and files warned.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "results/output.h"
#include "unit.h"

#define V2(pid, tag) "PROF_000001_20260101000000000_" pid tag
static const char *const dirs[] = {
	V2("00000042", "AAAAAAAA"),
	V2("00000042", "BBBBBBBB"),
	V2("00000007", "CCCCCCCC"),
	V2("00000420", "DDDDDDDD"),
	"PROF_000001_20260101000000000_ABCDEFGHIJKLMNOP",
	"PROF_000001_20260101000000001_RRRRRRRRRRRRRRRR",
	"PROF_x",
	"other",
};

static char root[64];

static void make_tree(void)
{
	char path[256];

	snprintf(root, sizeof(root), "/tmp/dynprof-unit-listing.XXXXXX");
	REQUIRE(mkdtemp(root));
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", root, dirs[i]);
		REQUIRE(mkdir(path, 0700) == 0);
	}
	/* A planted symlink and a file with names of pid 7: warned, never found. */
	snprintf(path, sizeof(path), "%s/%s", root, V2("00000007", "EEEEEEEE"));
	REQUIRE(symlink("/", path) == 0);
	snprintf(path, sizeof(path), "%s/%s", root, V2("00000007", "FFFFFFFF"));
	close(open(path, O_CREAT | O_WRONLY, 0600));
}

static void remove_tree(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	REQUIRE(system(cmd) == 0);
}

static void collect(void *ctx, const char *name)
{
	char *found = ctx;

	strcat(found, name);
	strcat(found, ";");
}

/* Found names come in readdir's or the listing's order: compare as sets. */
static bool same_set(const char *a, const char *b)
{
	size_t na = 0, nb = 0;

	for (const char *p = a; *p; p++)
		na += *p == ';';
	for (const char *p = b; *p; p++)
		nb += *p == ';';
	if (na != nb)
		return false;
	for (const char *p = a; *p;) {
		const char *semi = strchr(p, ';');
		char one[80], both[1024];

		snprintf(one, sizeof(one), ";%.*s;", (int)(semi - p), p);
		snprintf(both, sizeof(both), ";%s", b);
		if (!strstr(both, one))
			return false;
		p = semi + 1;
	}
	return true;
}

TEST(one_listing_finds_what_a_listing_per_target_finds)
{
	const int pids[] = { 42, 7, 420, 99, OUTPUT_V1_NAMES };
	struct output_listing l = { 0 };

	make_tree();
	REQUIRE(output_listing_read(&l, root) == 0);
	CHECK(output_listing_valid(&l));
	for (size_t i = 0; i < sizeof(pids) / sizeof(pids[0]); i++) {
		char a[1024] = "", b[1024] = "";
		char *ka = NULL, *kb = NULL;

		CHECK_INT(output_new_prof_dirs(root, pids[i], &ka, collect, a), 0);
		CHECK_INT(output_new_prof_dirs_listed(&l, pids[i], &kb, collect, b), 0);
		CHECK(same_set(a, b));
		/* Known now: a second look finds nothing new. */
		b[0] = '\0';
		CHECK_INT(output_new_prof_dirs_listed(&l, pids[i], &kb, collect, b), 0);
		CHECK_STR(b, "");
		free(ka);
		free(kb);
	}
	output_listing_forget(&l);
	CHECK(!output_listing_valid(&l));
	output_listing_free(&l);
	remove_tree();
}

TEST(listing_counts_per_pid)
{
	struct output_listing l = { 0 };
	char found[1024] = "";
	char *known = NULL;

	make_tree();
	REQUIRE(output_listing_read(&l, root) == 0);
	CHECK_INT(output_new_prof_dirs_listed(&l, 42, &known, collect, found), 0);
	CHECK(same_set(found, V2("00000042", "AAAAAAAA") ";" V2("00000042", "BBBBBBBB") ";"));
	found[0] = '\0';
	CHECK_INT(output_new_prof_dirs_listed(&l, 7, &known, collect, found), 0);
	CHECK_STR(found, V2("00000007", "CCCCCCCC") ";"); /* not the symlink, not the file */
	free(known);
	output_listing_free(&l);
	remove_tree();
	/* Not listed: refused, not an empty answer. */
	CHECK_INT(output_new_prof_dirs_listed(&l, 7, &known, collect, found), -EBADF);
}

/* pid 42's names the listing gives, as a set (";"-ended). */
static void names_of_42(struct output_listing *l, char *found)
{
	char *known = NULL;

	found[0] = '\0';
	CHECK_INT(output_new_prof_dirs_listed(l, 42, &known, collect, found), 0);
	free(known);
}

/*
 * A listing set aside is taken back while the folder did not change (its
 * ctime), read again once it did, and not trusted when it was made within
 * a clock tick of the folder's last change (a change right after it could
 * carry the same ctime).
 */
TEST(a_listing_set_aside_is_read_again_only_when_the_folder_changed)
{
	struct output_listing l = { 0 };
	char found[1024], path[256];
	const char *two = V2("00000042", "AAAAAAAA") ";" V2("00000042", "BBBBBBBB") ";";

	make_tree();
	usleep(120 * 1000); /* past the margin: the tree's last change is old */
	REQUIRE(output_listing_read(&l, root) == 0);
	CHECK_INT(l.reads, 1);
	output_listing_set_aside(&l);
	CHECK(!output_listing_valid(&l));
	REQUIRE(output_listing_read(&l, root) == 0);
	CHECK_INT(l.reads, 1); /* taken back */
	names_of_42(&l, found);
	CHECK(same_set(found, two));

	snprintf(path, sizeof(path), "%s/%s", root, V2("00000042", "GGGGGGGG"));
	REQUIRE(mkdir(path, 0700) == 0);
	output_listing_set_aside(&l);
	REQUIRE(output_listing_read(&l, root) == 0);
	CHECK_INT(l.reads, 2); /* changed: read again, the new one seen */
	names_of_42(&l, found);
	CHECK(same_set(found, V2("00000042", "GGGGGGGG") ";" V2("00000042",
								"AAAAAAAA") ";" V2("00000042",
										   "BBBBBBBB") ";"));
	output_listing_set_aside(&l);
	REQUIRE(output_listing_read(&l, root) == 0);
	CHECK_INT(l.reads, 3); /* the last one was made right after a change: not trusted */
	usleep(120 * 1000);
	output_listing_set_aside(&l);
	REQUIRE(output_listing_read(&l, root) == 0);
	CHECK_INT(l.reads, 4);
	output_listing_set_aside(&l);
	REQUIRE(output_listing_read(&l, root) == 0);
	CHECK_INT(l.reads, 4); /* made well after the change: taken back */
	output_listing_free(&l);
	remove_tree();
}

UNIT_MAIN()
