// SPDX-License-Identifier: MIT
/* protodetect.c: toolkit roots, version files, the generation each speaks. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "session/protodetect.h"
#include "unit.h"

/* ---- toolkit root ---------------------------------------------------------- */

TEST(toolkit_root_is_the_folder_holding_arch_linux)
{
	char root[256];

	CHECK_INT(protodetect_toolkit_root("/usr/local/Ascend/ascend-toolkit/8.0.RC1/x86_64-linux/lib64/libascendcl.so",
					   root, sizeof(root)),
		  0);
	CHECK_STR(root, "/usr/local/Ascend/ascend-toolkit/8.0.RC1");
}

TEST(toolkit_root_keeps_latest_as_it_is)
{
	char root[256];

	/* "latest" is a symlink the target resolves; we read through it inside its root. */
	CHECK_INT(protodetect_toolkit_root("/usr/local/Ascend/ascend-toolkit/latest/aarch64-linux/lib64/libmsprofiler.so",
					   root, sizeof(root)),
		  0);
	CHECK_STR(root, "/usr/local/Ascend/ascend-toolkit/latest");
}

TEST(toolkit_root_of_an_unversioned_cann_folder)
{
	char root[256];

	/* CANN 8.5 layout: /usr/local/Ascend/cann/<arch>-linux/... */
	CHECK_INT(protodetect_toolkit_root("/usr/local/Ascend/cann/x86_64-linux/lib64/libascendcl.so",
					   root, sizeof(root)),
		  0);
	CHECK_STR(root, "/usr/local/Ascend/cann");
}

TEST(toolkit_root_from_arch_linux_deeper_in_the_path)
{
	char root[256];

	CHECK_INT(protodetect_toolkit_root("/opt/Ascend/ascend-toolkit/6.3.RC1/x86_64-linux/fwkacllib/lib64/libprofapi.so",
					   root, sizeof(root)),
		  0);
	CHECK_STR(root, "/opt/Ascend/ascend-toolkit/6.3.RC1");
}

TEST(toolkit_root_from_lib64_skips_one_package_folder)
{
	char root[256];

	CHECK_INT(protodetect_toolkit_root("/usr/local/Ascend/nnrt/6.0.1/runtime/lib64/libascendcl.so",
					   root, sizeof(root)),
		  0);
	CHECK_STR(root, "/usr/local/Ascend/nnrt/6.0.1");
	CHECK_INT(protodetect_toolkit_root("/home/u/Ascend/nnae/7.0.0/lib64/libascendcl.so.1", root,
					   sizeof(root)),
		  0);
	CHECK_STR(root, "/home/u/Ascend/nnae/7.0.0");
}

TEST(toolkit_root_ignores_gnu_triplet_folders)
{
	char root[256];

	/* x86_64-linux-gnu does not end in "-linux": no arch folder, no lib64 either. */
	CHECK_INT(protodetect_toolkit_root("/usr/lib/x86_64-linux-gnu/libascendcl.so", root, sizeof(root)),
		  -ENOENT);
}

TEST(toolkit_root_needs_a_layout)
{
	char root[256];

	CHECK_INT(protodetect_toolkit_root("/tmp/libascendcl.so", root, sizeof(root)), -ENOENT);
	CHECK_INT(protodetect_toolkit_root("libascendcl.so", root, sizeof(root)), -ENOENT);
	CHECK_INT(protodetect_toolkit_root("/lib64/libascendcl.so", root, sizeof(root)), -ENOENT);
}

TEST(toolkit_root_too_long_is_enametoolong)
{
	char root[8];

	CHECK_INT(protodetect_toolkit_root("/usr/local/Ascend/x/x86_64-linux/lib64/libascendcl.so",
					   root, sizeof(root)),
		  -ENAMETOOLONG);
}

TEST(path_arch_names_the_arch_folder)
{
	char arch[32];

	CHECK_INT(protodetect_path_arch("/a/8.0/aarch64-linux/lib64/libascendcl.so", arch, sizeof(arch)),
		  0);
	CHECK_STR(arch, "aarch64-linux");
	CHECK_INT(protodetect_path_arch("/a/8.0/lib64/libascendcl.so", arch, sizeof(arch)), -ENOENT);
}

/* ---- which maps lines count ---------------------------------------------------- */

TEST(cann_libraries_are_recognised)
{
	CHECK_INT(protodetect_is_cann_lib("/x/8.0/x86_64-linux/lib64/libascendcl.so"), 1);
	CHECK_INT(protodetect_is_cann_lib("/x/8.0/x86_64-linux/lib64/libmsprofiler.so"), 1);
	CHECK_INT(protodetect_is_cann_lib("/x/8.0/x86_64-linux/lib64/libprofapi.so"), 1);
	CHECK_INT(protodetect_is_cann_lib("/usr/local/Ascend/ascend-toolkit/8.0/runtime/lib64/libruntime.so"),
		  1);
	CHECK_INT(protodetect_is_cann_lib("/x/8.0/x86_64-linux/lib64/libascendcl.so.1"), 1);
}

TEST(lookalike_libraries_are_not_cann)
{
	CHECK_INT(protodetect_is_cann_lib("/usr/lib/libruntime.so"), 0);
	CHECK_INT(protodetect_is_cann_lib("/x/lib64/libascendcl_extra.so"), 0);
	CHECK_INT(protodetect_is_cann_lib("/usr/lib/x86_64-linux-gnu/libc.so.6"), 0);
	/* The driver's libraries carry driver version numbers. */
	CHECK_INT(protodetect_is_cann_lib("/usr/local/Ascend/driver/lib64/driver/libascendcl.so"), 0);
}

TEST(agent_library_is_recognised)
{
	CHECK_INT(protodetect_is_agent_lib("/usr/local/lib/libdynprof_agent.so"), 1);
	CHECK_INT(protodetect_is_agent_lib("/usr/local/lib/libdynprof.so"), 0);
	CHECK_INT(protodetect_is_agent_lib("/home/libdynprof_agent/libc.so"), 0);
}

TEST(profimpl_library_is_recognised)
{
	CHECK_INT(protodetect_is_profimpl_lib("/usr/local/Ascend/cann-9.1.0/lib64/libprofimpl.so"), 1);
	CHECK_INT(protodetect_is_profimpl_lib("/opt/lib64/libprofimpl.so.1"), 1);
	CHECK_INT(protodetect_is_profimpl_lib("/opt/lib64/libprofimpl_stub.so"), 0);
	CHECK_INT(protodetect_is_profimpl_lib("/opt/libprofimpl.so/libc.so"), 0);
}

/* ---- version files ---------------------------------------------------------------- */

TEST(install_info_version_line_is_read)
{
	char v[64];

	CHECK_INT(protodetect_parse_version("package_name=Ascend-cann-toolkit\n"
					    "version=7.0.0\n"
					    "innerversion=V100R001C15SPC002B224\n"
					    "arch=x86_64\nos=linux\n",
					    v, sizeof(v)),
		  7);
	CHECK_STR(v, "7.0.0");
}

TEST(capitalised_version_key_is_read)
{
	char v[64];

	CHECK_INT(protodetect_parse_version("Version=8.0.RC1\n", v, sizeof(v)), 8);
	CHECK_STR(v, "8.0.RC1");
	CHECK_INT(protodetect_parse_version("  VERSION = \"10.1.0\"\r\n", v, sizeof(v)), 10);
	CHECK_STR(v, "10.1.0");
}

TEST(innerversion_is_not_the_version)
{
	char v[64];

	CHECK_INT(protodetect_parse_version("innerversion=V100R001C17\n", v, sizeof(v)), -1);
	CHECK_INT(protodetect_parse_version("package_version=24.1.rc3\n", v, sizeof(v)), -1);
}

TEST(version_cfg_uses_the_cann_part_not_the_component_number)
{
	char v[64];

	/* The component number 7.3.0.1.231 would wrongly say v1. */
	CHECK_INT(protodetect_parse_version("# version: 1.0\n"
					    "runtime_running_version=[7.3.0.1.231:8.0.RC2]\n"
					    "compiler_running_version=[7.3.0.1.231:8.0.RC2]\n",
					    v, sizeof(v)),
		  8);
	CHECK_STR(v, "8.0.RC2");
}

TEST(version_cfg_prefers_the_runtime_line)
{
	char v[64];

	CHECK_INT(protodetect_parse_version("compiler_running_version=[6.0.0.1:6.3.RC2]\n"
					    "runtime_running_version=[7.0.0.5:7.0.0]\n",
					    v, sizeof(v)),
		  7);
	CHECK_STR(v, "7.0.0");
}

TEST(version_cfg_old_cann_prefix_and_plain_bracket)
{
	char v[64];

	CHECK_INT(protodetect_parse_version("runtime_running_version=[1.83.T8.0.B128:CANN-1.83]\n",
					    v, sizeof(v)),
		  1);
	CHECK_STR(v, "1.83");
	CHECK_INT(protodetect_parse_version("runtime_running_version=[9.9]\n", v, sizeof(v)), 9);
	CHECK_STR(v, "9.9");
}

TEST(version_line_beats_running_version)
{
	char v[64];

	CHECK_INT(protodetect_parse_version("runtime_running_version=[7.6.0.1.220:8.0.0]\n"
					    "version=8.1.RC1\n",
					    v, sizeof(v)),
		  8);
	CHECK_STR(v, "8.1.RC1");
}

TEST(text_without_version_is_minus_one)
{
	char v[64] = "junk";

	CHECK_INT(protodetect_parse_version("", v, sizeof(v)), -1);
	CHECK_STR(v, "");
	CHECK_INT(protodetect_parse_version("# version=7.0.0\narch=x86_64\n", v, sizeof(v)), -1);
	CHECK_INT(protodetect_parse_version("version=\n", v, sizeof(v)), -1);
}

/* ---- version -> generation --------------------------------------------------------- */

/* The msprof line up to the 8.3.0 branch is v1 (docs/PROTOCOL.md, generations). */
TEST(versions_before_8_5_speak_v1)
{
	CHECK_INT(protodetect_for_version("7.0.0"), PROTO_V1);
	CHECK_INT(protodetect_for_version("6.3.RC1"), PROTO_V1);
	CHECK_INT(protodetect_for_version("7.0.RC1.alpha003"), PROTO_V1);
	CHECK_INT(protodetect_for_version("8.0.RC1"), PROTO_V1);
	CHECK_INT(protodetect_for_version("8.0.0"), PROTO_V1);
	CHECK_INT(protodetect_for_version("8.3.RC1"), PROTO_V1);
	CHECK_INT(protodetect_for_version("8.4.9"), PROTO_V1);
}

TEST(versions_8_5_and_later_speak_v2)
{
	CHECK_INT(protodetect_for_version("8.5.0"), PROTO_V2);
	CHECK_INT(protodetect_for_version("8.5.RC1"), PROTO_V2);
	CHECK_INT(protodetect_for_version("8.10.0"), PROTO_V2);
	CHECK_INT(protodetect_for_version("9.0.0-beta.1"), PROTO_V2);
	CHECK_INT(protodetect_for_version("9.0"), PROTO_V2);
	CHECK_INT(protodetect_for_version("10.0.0"), PROTO_V2);
}

TEST(unknown_versions_speak_v2)
{
	CHECK_INT(protodetect_for_version(NULL), PROTO_V2);
	CHECK_INT(protodetect_for_version(""), PROTO_V2);
	CHECK_INT(protodetect_for_version("V100R001"), PROTO_V2);
}

TEST(a_plain_process_defaults_to_v2)
{
	char why[256];

	/* This test binary maps no CANN and no agent; the variable would decide instead. */
	REQUIRE(getenv("DYNPROF_AGENT_PROTOCOL") == NULL);
	CHECK_INT(protodetect(getpid(), why, sizeof(why)), PROTO_V2);
	CHECK_STR(why, "no CANN version found: v2");
}

/* `dir`/`name` (unlinked), one page of it mapped executable: the page, or MAP_FAILED. */
static void *map_code(const char *dir, const char *name, char *path, size_t len)
{
	int fd;
	void *p;

	snprintf(path, len, "%s/%s", dir, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || ftruncate(fd, 4096) < 0)
		return MAP_FAILED;
	p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	close(fd);
	unlink(path);
	return p;
}

/*
 * The walk goes up the address space and ends at libprofimpl.so when no
 * agent variable says v1: an agent mapped above it is not reached (the
 * answer is v2 either way), so the reason names libprofimpl. Mapped in
 * this order, the agent lands above (the kernel places mappings top
 * down); a walk to the end would name the agent.
 */
TEST(the_walk_ends_at_libprofimpl_when_nothing_further_can_say_v1)
{
	char dir[] = "/tmp/dynprof-unit-protodetect.XXXXXX", agent[256], impl[256], why[256];
	void *a, *i;

	REQUIRE(getenv("DYNPROF_AGENT_PROTOCOL") == NULL);
	REQUIRE(mkdtemp(dir) != NULL);
	a = map_code(dir, "libdynprof_agent.so", agent, sizeof(agent));
	i = map_code(dir, "libprofimpl.so", impl, sizeof(impl));
	rmdir(dir);
	REQUIRE(a != MAP_FAILED && i != MAP_FAILED && (char *)i < (char *)a);
	CHECK_INT(protodetect(getpid(), why, sizeof(why)), PROTO_V2);
	CHECK_STR(why, "libprofimpl.so mapped (the v2 server's library): v2");
	munmap(a, 4096);
	munmap(i, 4096);
}

UNIT_MAIN()
