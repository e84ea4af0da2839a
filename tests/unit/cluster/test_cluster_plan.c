// SPDX-License-Identifier: MIT
/*
 * The job's state and nodes from squeue's two fields (cluster/cluster_plan.c):
 * nothing a user names the job can pose as either.
 */
#include <errno.h>

#include "cluster/cluster_plan.h"
#include "unit.h"

static char state[64], nodes[256];

static int parse(const char *out)
{
	return cluster_plan_parse_queue(out, state, sizeof(state), nodes, sizeof(nodes));
}

TEST(queue_running_and_pending)
{
	CHECK_INT(parse("RUNNING n[1-3],gpu-a.b_2\n"), 0);
	CHECK_STR(state, "RUNNING");
	CHECK_STR(nodes, "n[1-3],gpu-a.b_2");
	CHECK_INT(parse("PENDING \n"), 0);
	CHECK_STR(state, "PENDING");
	CHECK_STR(nodes, "");
	CHECK_INT(parse("OUT_OF_MEMORY"), 0);
	CHECK_STR(state, "OUT_OF_MEMORY");
	/* An array job: one line per task, the first is taken. */
	CHECK_INT(parse("RUNNING n1\nPENDING \n"), 0);
	CHECK_STR(state, "RUNNING");
	CHECK_STR(nodes, "n1");
}

/* The text `scontrol show job -o` gives for a job named "x JobState=RUNNING NodeList=nodeZ". */
TEST(queue_a_hostile_name_poses_as_no_field)
{
	CHECK_INT(parse("JobId=7 JobName=x JobState=RUNNING NodeList=nodeZ UserId=u(1) JobState=PENDING\n"),
		  -EINVAL);
	CHECK_STR(state, "");
	CHECK_INT(parse("PENDING x JobState=RUNNING NodeList=nodeZ\n"), -EINVAL);
	CHECK_STR(state, "");
	CHECK_STR(nodes, "");
	CHECK_INT(parse("PENDING nodeZ JobState=RUNNING\n"), -EINVAL);
	CHECK_INT(parse("RUNNING NodeList=nodeZ\n"), -EINVAL);
	CHECK_STR(state, "");
}

TEST(queue_nothing_or_too_long)
{
	CHECK_INT(parse(""), -EINVAL);
	CHECK_INT(parse("\n"), -EINVAL);
	CHECK_INT(parse(" RUNNING n1\n"), -EINVAL);
	CHECK_INT(parse("running n1\n"), -EINVAL);
	CHECK_INT(cluster_plan_parse_queue("RUNNING n1234", state, sizeof(state), nodes, 4), -EINVAL);
	CHECK_INT(cluster_plan_parse_queue("RUNNING n1", state, 7, nodes, sizeof(nodes)), -EINVAL);
}

UNIT_MAIN()
