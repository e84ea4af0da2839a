// SPDX-License-Identifier: MIT
/* protodetect.c: toolkit roots, version files, the generation each speaks. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "target/protodetect.h"
#include "unit.h"

/* ---- toolkit root ---------------------------------------------------------- */

static void toolkit_root_is_the_folder_holding_arch_linux(void)
{
	char root[256];

	CHECK_INT(protodetect_toolkit_root(
			  "/usr/local/Ascend/ascend-toolkit/8.0.RC1/x86_64-linux/lib64/libascendcl.so",
			  root, sizeof(root)),
		  0);
	CHECK_STR(root, "/usr/local/Ascend/ascend-toolkit/8.0.RC1");
}

static void toolkit_root_keeps_latest_as_it_is(void)
{
	char root[256];

	/* "latest" is a symlink the target resolves; we read through it inside its root. */
	CHECK_INT(protodetect_toolkit_root(
			  "/usr/local/Ascend/ascend-toolkit/latest/aarch64-linux/lib64/libmsprofiler.so",
			  root, sizeof(root)),
		  0);
	CHECK_STR(root, "/usr/local/Ascend/ascend-toolkit/latest");
}

static void toolkit_root_of_an_unversioned_cann_folder(void)
{
	char root[256];

	/* CANN 8.5 layout: /usr/local/Ascend/cann/<arch>-linux/... */
	CHECK_INT(protodetect_toolkit_root("/usr/local/Ascend/cann/x86_64-linux/lib64/libascendcl.so",
					   root, sizeof(root)),
		  0);
	CHECK_STR(root, "/usr/local/Ascend/cann");
}

static void toolkit_root_from_arch_linux_deeper_in_the_path(void)
{
	char root[256];

	CHECK_INT(protodetect_toolkit_root(
			  "/opt/Ascend/ascend-toolkit/6.3.RC1/x86_64-linux/fwkacllib/lib64/libprofapi.so",
			  root, sizeof(root)),
		  0);
	CHECK_STR(root, "/opt/Ascend/ascend-toolkit/6.3.RC1");
}

static void toolkit_root_from_lib64_skips_one_package_folder(void)
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

static void toolkit_root_ignores_gnu_triplet_folders(void)
{
	char root[256];

	/* x86_64-linux-gnu does not end in "-linux": no arch folder, no lib64 either. */
	CHECK_INT(protodetect_toolkit_root("/usr/lib/x86_64-linux-gnu/libascendcl.so", root,
					   sizeof(root)),
		  -ENOENT);
}

static void toolkit_root_needs_a_layout(void)
{
	char root[256];

	CHECK_INT(protodetect_toolkit_root("/tmp/libascendcl.so", root, sizeof(root)), -ENOENT);
	CHECK_INT(protodetect_toolkit_root("libascendcl.so", root, sizeof(root)), -ENOENT);
	CHECK_INT(protodetect_toolkit_root("/lib64/libascendcl.so", root, sizeof(root)), -ENOENT);
}

static void toolkit_root_too_long_is_enametoolong(void)
{
	char root[8];

	CHECK_INT(protodetect_toolkit_root("/usr/local/Ascend/x/x86_64-linux/lib64/libascendcl.so",
					   root, sizeof(root)),
		  -ENAMETOOLONG);
}

static void path_arch_names_the_arch_folder(void)
{
	char arch[32];

	CHECK_INT(protodetect_path_arch("/a/8.0/aarch64-linux/lib64/libascendcl.so", arch,
					sizeof(arch)),
		  0);
	CHECK_STR(arch, "aarch64-linux");
	CHECK_INT(protodetect_path_arch("/a/8.0/lib64/libascendcl.so", arch, sizeof(arch)), -ENOENT);
}

/* ---- which maps lines count ---------------------------------------------------- */

static void cann_libraries_are_recognised(void)
{
	CHECK_INT(protodetect_is_cann_lib("/x/8.0/x86_64-linux/lib64/libascendcl.so"), 1);
	CHECK_INT(protodetect_is_cann_lib("/x/8.0/x86_64-linux/lib64/libmsprofiler.so"), 1);
	CHECK_INT(protodetect_is_cann_lib("/x/8.0/x86_64-linux/lib64/libprofapi.so"), 1);
	CHECK_INT(protodetect_is_cann_lib("/usr/local/Ascend/ascend-toolkit/8.0/runtime/lib64/libruntime.so"), 1);
	CHECK_INT(protodetect_is_cann_lib("/x/8.0/x86_64-linux/lib64/libascendcl.so.1"), 1);
}

static void lookalike_libraries_are_not_cann(void)
{
	CHECK_INT(protodetect_is_cann_lib("/usr/lib/libruntime.so"), 0);
	CHECK_INT(protodetect_is_cann_lib("/x/lib64/libascendcl_extra.so"), 0);
	CHECK_INT(protodetect_is_cann_lib("/usr/lib/x86_64-linux-gnu/libc.so.6"), 0);
	/* The driver's libraries carry driver version numbers. */
	CHECK_INT(protodetect_is_cann_lib("/usr/local/Ascend/driver/lib64/driver/libascendcl.so"), 0);
}

static void agent_library_is_recognised(void)
{
	CHECK_INT(protodetect_is_agent_lib("/usr/local/lib/libdynprof_agent.so"), 1);
	CHECK_INT(protodetect_is_agent_lib("/usr/local/lib/libdynprof.so"), 0);
	CHECK_INT(protodetect_is_agent_lib("/home/libdynprof_agent/libc.so"), 0);
}

static void maps_path_is_the_sixth_field_with_spaces_kept(void)
{
	char path[256];

	CHECK_INT(protodetect_maps_path("7f1c2a000000-7f1c2a021000 r-xp 00000000 08:01 1234   "
					"/opt/My Ascend/x86_64-linux/lib64/libascendcl.so\n",
					path, sizeof(path)),
		  0);
	CHECK_STR(path, "/opt/My Ascend/x86_64-linux/lib64/libascendcl.so");
}

static void maps_path_drops_deleted_suffix(void)
{
	char path[256];

	CHECK_INT(protodetect_maps_path("7f00-7f10 r-xp 00000000 08:01 99 /tmp/libdynprof_agent.so (deleted)",
					path, sizeof(path)),
		  0);
	CHECK_STR(path, "/tmp/libdynprof_agent.so");
}

static void maps_line_without_a_file_has_no_path(void)
{
	char path[256];

	CHECK_INT(protodetect_maps_path("7ffd-7ffe rw-p 00000000 00:00 0          [stack]", path,
					sizeof(path)),
		  -ENOENT);
	CHECK_INT(protodetect_maps_path("7ffd-7ffe rw-p 00000000 00:00 0 ", path, sizeof(path)),
		  -ENOENT);
}

/* ---- version files ---------------------------------------------------------------- */

static void install_info_version_line_is_read(void)
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

static void capitalised_version_key_is_read(void)
{
	char v[64];

	CHECK_INT(protodetect_parse_version("Version=8.0.RC1\n", v, sizeof(v)), 8);
	CHECK_STR(v, "8.0.RC1");
	CHECK_INT(protodetect_parse_version("  VERSION = \"10.1.0\"\r\n", v, sizeof(v)), 10);
	CHECK_STR(v, "10.1.0");
}

static void innerversion_is_not_the_version(void)
{
	char v[64];

	CHECK_INT(protodetect_parse_version("innerversion=V100R001C17\n", v, sizeof(v)), -1);
	CHECK_INT(protodetect_parse_version("package_version=24.1.rc3\n", v, sizeof(v)), -1);
}

static void version_cfg_uses_the_cann_part_not_the_component_number(void)
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

static void version_cfg_prefers_the_runtime_line(void)
{
	char v[64];

	CHECK_INT(protodetect_parse_version("compiler_running_version=[6.0.0.1:6.3.RC2]\n"
					    "runtime_running_version=[7.0.0.5:7.0.0]\n",
					    v, sizeof(v)),
		  7);
	CHECK_STR(v, "7.0.0");
}

static void version_cfg_old_cann_prefix_and_plain_bracket(void)
{
	char v[64];

	CHECK_INT(protodetect_parse_version("runtime_running_version=[1.83.T8.0.B128:CANN-1.83]\n", v,
					    sizeof(v)),
		  1);
	CHECK_STR(v, "1.83");
	CHECK_INT(protodetect_parse_version("runtime_running_version=[9.9]\n", v, sizeof(v)), 9);
	CHECK_STR(v, "9.9");
}

static void version_line_beats_running_version(void)
{
	char v[64];

	CHECK_INT(protodetect_parse_version("runtime_running_version=[7.6.0.1.220:8.0.0]\n"
					    "version=8.1.RC1\n",
					    v, sizeof(v)),
		  8);
	CHECK_STR(v, "8.1.RC1");
}

static void text_without_version_is_minus_one(void)
{
	char v[64] = "junk";

	CHECK_INT(protodetect_parse_version("", v, sizeof(v)), -1);
	CHECK_STR(v, "");
	CHECK_INT(protodetect_parse_version("# version=7.0.0\narch=x86_64\n", v, sizeof(v)), -1);
	CHECK_INT(protodetect_parse_version("version=\n", v, sizeof(v)), -1);
}

/* ---- version -> generation --------------------------------------------------------- */

/* The msprof line up to the 8.3.0 branch is v1 (PROTOCOL.md, generations). */
static void versions_before_8_5_speak_v1(void)
{
	CHECK_INT(protodetect_for_version("7.0.0"), PROTO_V1);
	CHECK_INT(protodetect_for_version("6.3.RC1"), PROTO_V1);
	CHECK_INT(protodetect_for_version("7.0.RC1.alpha003"), PROTO_V1);
	CHECK_INT(protodetect_for_version("8.0.RC1"), PROTO_V1);
	CHECK_INT(protodetect_for_version("8.0.0"), PROTO_V1);
	CHECK_INT(protodetect_for_version("8.3.RC1"), PROTO_V1);
	CHECK_INT(protodetect_for_version("8.4.9"), PROTO_V1);
}

static void versions_8_5_and_later_speak_v2(void)
{
	CHECK_INT(protodetect_for_version("8.5.0"), PROTO_V2);
	CHECK_INT(protodetect_for_version("8.5.RC1"), PROTO_V2);
	CHECK_INT(protodetect_for_version("8.10.0"), PROTO_V2);
	CHECK_INT(protodetect_for_version("9.0.0-beta.1"), PROTO_V2);
	CHECK_INT(protodetect_for_version("9.0"), PROTO_V2);
	CHECK_INT(protodetect_for_version("10.0.0"), PROTO_V2);
}

static void unknown_versions_speak_v2(void)
{
	CHECK_INT(protodetect_for_version(NULL), PROTO_V2);
	CHECK_INT(protodetect_for_version(""), PROTO_V2);
	CHECK_INT(protodetect_for_version("V100R001"), PROTO_V2);
}

static void a_plain_process_defaults_to_v2(void)
{
	char why[256];

	/* This test binary maps no CANN and no agent (unless the variable leaks in). */
	if (getenv("DYNPROF_AGENT_PROTOCOL"))
		return;
	CHECK_INT(protodetect(getpid(), why, sizeof(why)), PROTO_V2);
	CHECK_STR(why, "no CANN version found: v2");
}

int main(void)
{
	RUN(toolkit_root_is_the_folder_holding_arch_linux);
	RUN(toolkit_root_keeps_latest_as_it_is);
	RUN(toolkit_root_of_an_unversioned_cann_folder);
	RUN(toolkit_root_from_arch_linux_deeper_in_the_path);
	RUN(toolkit_root_from_lib64_skips_one_package_folder);
	RUN(toolkit_root_ignores_gnu_triplet_folders);
	RUN(toolkit_root_needs_a_layout);
	RUN(toolkit_root_too_long_is_enametoolong);
	RUN(path_arch_names_the_arch_folder);
	RUN(cann_libraries_are_recognised);
	RUN(lookalike_libraries_are_not_cann);
	RUN(agent_library_is_recognised);
	RUN(maps_path_is_the_sixth_field_with_spaces_kept);
	RUN(maps_path_drops_deleted_suffix);
	RUN(maps_line_without_a_file_has_no_path);
	RUN(install_info_version_line_is_read);
	RUN(capitalised_version_key_is_read);
	RUN(innerversion_is_not_the_version);
	RUN(version_cfg_uses_the_cann_part_not_the_component_number);
	RUN(version_cfg_prefers_the_runtime_line);
	RUN(version_cfg_old_cann_prefix_and_plain_bracket);
	RUN(version_line_beats_running_version);
	RUN(text_without_version_is_minus_one);
	RUN(versions_before_8_5_speak_v1);
	RUN(versions_8_5_and_later_speak_v2);
	RUN(unknown_versions_speak_v2);
	RUN(a_plain_process_defaults_to_v2);
	UNIT_EXIT();
}
