// SPDX-License-Identifier: MIT
/*
 * Card node recognition (shared/cards.c): patterns, the trailing index,
 * mask text, and the cards this very process holds open (fake nodes: plain
 * files in a private folder matched by a pattern naming that folder).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "shared/cards.h"
#include "unit.h"

TEST(defaults_take_numbered_nodes_only)
{
	struct card_patterns p;

	cards_default_patterns(&p);
	CHECK_INT(cards_match(&p, "/dev/davinci3"), 3);
	CHECK_INT(cards_match(&p, "/dev/davinci_manager"), -1);
	CHECK_INT(cards_match(&p, "/dev/nvidia0"), 0);
	CHECK_INT(cards_match(&p, "/dev/nvidiactl"), -1);
	CHECK_INT(cards_match(&p, "/dev/accel/accel12"), 12);
	CHECK_INT(cards_match(&p, "/dev/dri/renderD128"), 128);
	CHECK_INT(cards_match(&p, "/dev/dri/card0"), -1);
	CHECK_INT(cards_match(&p, "/dev/sda1"), -1);
	cards_free_patterns(&p); /* defaults own nothing: safe */
}

TEST(slash_is_matched_only_literally)
{
	struct card_patterns p;

	REQUIRE(cards_parse_patterns(&p, "/dev/*7") == 0);
	CHECK_INT(cards_match(&p, "/dev/x7"), 7);
	CHECK_INT(cards_match(&p, "/dev/sub/x7"), -1);
	cards_free_patterns(&p);
}

TEST(index_of_more_than_six_digits_is_no_card)
{
	struct card_patterns p;

	REQUIRE(cards_parse_patterns(&p, "/n/c*") == 0);
	CHECK_INT(cards_match(&p, "/n/c999999"), 999999);
	CHECK_INT(cards_match(&p, "/n/c1234567"), -1);
	CHECK_INT(cards_match(&p, "/n/c007"), 7);
	CHECK_INT(cards_match(&p, "/n/c"), -1);
	cards_free_patterns(&p);
}

TEST(lists_split_at_colons)
{
	struct card_patterns p;

	REQUIRE(cards_parse_patterns(&p, "/a/x*::/b/y*:") == 0);
	CHECK_INT(p.count, 2);
	CHECK_STR(p.glob[0], "/a/x*");
	CHECK_STR(p.glob[1], "/b/y*");
	CHECK_INT(cards_match(&p, "/b/y4"), 4);
	CHECK_INT(cards_match(&p, "/dev/davinci0"), -1); /* the list replaces the defaults */
	cards_free_patterns(&p);
	CHECK(p.storage == NULL);
	CHECK_INT(p.count, 0);
}

TEST(empty_and_too_long_lists_are_einval)
{
	char list[CARDS_MAX_PATTERNS * 4 + 8] = "";
	struct card_patterns p;

	CHECK_INT(cards_parse_patterns(&p, ""), -EINVAL);
	CHECK_INT(cards_parse_patterns(&p, ":::"), -EINVAL);
	CHECK_INT(cards_parse_patterns(&p, NULL), -EINVAL);
	for (int i = 0; i < CARDS_MAX_PATTERNS; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "/%c*:", 'a' + i);
	REQUIRE(cards_parse_patterns(&p, list) == 0);
	CHECK_INT(p.count, CARDS_MAX_PATTERNS);
	cards_free_patterns(&p);
	snprintf(list + strlen(list), sizeof(list) - strlen(list), "/z*");
	CHECK_INT(cards_parse_patterns(&p, list), -EINVAL);
	CHECK(p.storage == NULL);
}

TEST(mask_text_lists_indexes_and_cuts_safely)
{
	char buf[64], small[4];

	cards_mask_text(0, buf, sizeof(buf));
	CHECK_STR(buf, "");
	cards_mask_text((1ULL << 0) | (1ULL << 3), buf, sizeof(buf));
	CHECK_STR(buf, "0,3");
	cards_mask_text(1ULL << 63, buf, sizeof(buf));
	CHECK_STR(buf, "63");
	memset(small, 'x', sizeof(small));
	cards_mask_text((1ULL << 10) | (1ULL << 11) | (1ULL << 12), small, sizeof(small));
	CHECK(memchr(small, '\0', sizeof(small)) != NULL);
	CHECK_STR(small, "10,");
}

TEST(held_by_pid_is_the_lowest_open_card)
{
	char dir[] = "/tmp/dynprof-cards-XXXXXX", glob[64], path[64];
	struct card_patterns p;
	int fds[3], idx[3] = { 7, 2, 5 };

	REQUIRE(mkdtemp(dir) != NULL);
	snprintf(glob, sizeof(glob), "%s/card*", dir);
	REQUIRE(cards_parse_patterns(&p, glob) == 0);
	CHECK_INT(cards_held_by_pid(&p, getpid()), -1);
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/card%d", dir, idx[i]);
		fds[i] = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		CHECK(fds[i] >= 0);
	}
	CHECK_INT(cards_held_by_pid(&p, getpid()), 2);
	close(fds[1]);
	CHECK_INT(cards_held_by_pid(&p, getpid()), 5);
	close(fds[0]);
	close(fds[2]);
	CHECK_INT(cards_held_by_pid(&p, getpid()), -1);
	CHECK_INT(cards_held_by_pid(&p, 5000000), -1); /* above pid_max: no such process */
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/card%d", dir, idx[i]);
		unlink(path);
	}
	rmdir(dir);
	cards_free_patterns(&p);
}

UNIT_MAIN()
