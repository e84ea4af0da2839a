# The layer rule (tools/layers, tools/check-layers.sh): checked on the real
# objects of the build, and shown to fail on planted violations. Needs no
# root in principle, but runs with the integration tests since it reads the
# build's objects.

CHECK=$DYNPROF_TESTS/../tools/check-layers.sh

# The objects of the current sources (stale objects of removed files are not
# part of any link and must not count).
real_tool_objs() {
	local src
	for src in "$DYNPROF_TESTS"/../user/main.c "$DYNPROF_TESTS"/../user/*/*.c; do
		case $src in */user/agent/*) continue ;; esac
		src=${src#"$DYNPROF_TESTS"/../}
		echo "$DYNPROF_BUILD/obj/${src%.c}.o"
	done
}

# plant FOLDER NAME CODE: an object at $T/obj/user/FOLDER/NAME.o
plant() {
	mkdir -p "$T/obj/user/$1"
	printf '%s\n' "$3" >"$T/obj/user/$1/$2.c"
	cc -c -o "$T/obj/user/$1/$2.o" "$T/obj/user/$1/$2.c" || fail "cannot compile the planted $2"
}

test_layers_of_the_real_build_pass() {
	"$CHECK" $(real_tool_objs) -- "$DYNPROF_BUILD"/pic/user/*/*.o >$T/out 2>&1
	expect_status 0 $?
	expect_line '^check-layers: ok '
}

test_layers_refuse_an_upward_call() {
	# common/ is the second-lowest layer; console_run is cli/'s.
	plant common planted 'int console_run(void *); int planted(void) { return console_run(0); }'
	"$CHECK" $(real_tool_objs) "$T/obj/user/common/planted.o" >$T/out 2>&1
	expect_status 1 $?
	expect_line "planted.o \(common\) uses console_run from .*/cli/console.o \(cli\)"
}

test_layers_refuse_a_tool_symbol_in_the_agent() {
	plant agent planted 'int report_error(const char *, ...); int planted(void) { return report_error("x"); }'
	"$CHECK" "$DYNPROF_BUILD"/pic/user/*/*.o "$T/obj/user/agent/planted.o" \
		"$DYNPROF_BUILD/obj/user/report/report.o" >$T/out 2>&1
	expect_status 1 $?
	expect_line "planted.o \(agent\) uses report_error from .*/report/report.o \(report\): agent may use only: agent shared"
}

test_layers_report_a_cycle_within_one_folder() {
	plant report ping 'int pong(int); int ping(int n) { return n ? pong(n - 1) : 0; }'
	plant report pong 'int ping(int); int pong(int n) { return n ? ping(n - 1) : 1; }'
	"$CHECK" $(real_tool_objs) "$T/obj/user/report/ping.o" "$T/obj/user/report/pong.o" >$T/out 2>&1
	expect_status 1 $?
	expect_line "a cycle of objects that use each other: .*/report/p[io]ng.o -> .*/report/p[io]ng.o"
}

test_layers_refuse_a_folder_not_in_the_list() {
	plant gadgets planted 'int planted(void) { return 0; }'
	"$CHECK" "$T/obj/user/gadgets/planted.o" >$T/out 2>&1
	expect_status 1 $?
	expect_line "folder 'gadgets' is not in .*layers"
}

# ---- private headers (tools/check-private.sh): read on the sources ----

PRIVATE=$DYNPROF_TESTS/../tools/check-private.sh

# A copy of what check-private reads (user/, tests/unit/), to plant in.
private_tree() {
	mkdir -p "$T/tree/tests"
	cp -r "$DYNPROF_TESTS/../user" "$T/tree/user" || fail "cannot copy user/"
	cp -r "$DYNPROF_TESTS/unit" "$T/tree/tests/unit" || fail "cannot copy tests/unit/"
}

test_private_headers_of_the_real_tree_pass() {
	"$PRIVATE" >$T/out 2>&1
	expect_status 0 $?
	expect_line '^check-private: ok .*session/session_impl.h session/target_impl.h'
}

test_private_header_refused_above_its_folder() {
	private_tree
	printf '#include "session/session_impl.h"\n' >"$T/tree/user/control/planted.c"
	"$PRIVATE" "$T/tree" >$T/out 2>&1
	expect_status 1 $?
	expect_line '^user/control/planted.c includes session/session_impl.h, private to session/: use its public header$'
}

test_private_header_refused_in_another_folders_unit_test() {
	private_tree
	printf '#include "session/target_impl.h"\n' >"$T/tree/tests/unit/control/test_planted.c"
	"$PRIVATE" "$T/tree" >$T/out 2>&1
	expect_status 1 $?
	expect_line '^tests/unit/control/test_planted.c includes session/target_impl.h, private to session/'
}

test_private_header_refused_through_a_public_header() {
	# session.h handing on target_impl.h makes every includer of session.h a breach.
	private_tree
	printf '#include "session/target_impl.h"\n' >>"$T/tree/user/session/session.h"
	"$PRIVATE" "$T/tree" >$T/out 2>&1
	expect_status 1 $?
	expect_line '^user/cli/console.h includes session/session.h, private to session/ \(it includes session/target_impl.h\)'
	expect_line '^user/control/status.h includes session/session.h'
	expect_no_line '^user/session/'
}

test_private_struct_defined_outside_its_folder_refused() {
	private_tree
	printf 'struct session {\n\tint windows;\n};\n' >"$T/tree/user/control/planted.h"
	printf 'typedef struct target { int pid; } planted_t;\n' >"$T/tree/user/trigger/planted.c"
	"$PRIVATE" "$T/tree" >$T/out 2>&1
	expect_status 1 $?
	expect_line '^user/control/planted.h defines struct session, whose members are private to session/ \(session/session_impl.h\)$'
	expect_line '^user/trigger/planted.c defines struct target, whose members are private to session/ \(session/target_impl.h\)$'
}

# The folder shape: a build-output name, and a folder past 15% of the lines.
test_folders_refuse_an_output_name_and_a_folder_past_its_share() {
	local u=$T/user
	mkdir -p $u/a $u/b $u/c $u/d $u/e $u/f $u/g $u/h
	for d in a b c d e f g h; do seq 100 | sed 's/^/int x/; s/$/;/' > $u/$d/$d.c; done
	"$DYNPROF_TESTS/../tools/check-folders.sh" $u > $T/out 2>&1
	expect_status 0 $?
	mkdir $u/target && seq 10 | sed 's/^/int y/; s/$/;/' > $u/target/t.c
	"$DYNPROF_TESTS/../tools/check-folders.sh" $u > $T/out 2>&1
	expect_status 1 $?
	expect_line "user/target: a build-output name"
	seq 300 | sed 's/^/int z/; s/$/;/' >> $u/a/a.c
	"$DYNPROF_TESTS/../tools/check-folders.sh" $u > $T/out 2>&1
	expect_status 1 $?
	expect_line "user/a holds 400 of [0-9]+ lines \([0-9]+%\), more than 15%"
	tools_out=$("$DYNPROF_TESTS/../tools/check-folders.sh" "$DYNPROF_TESTS/../user") || fail "the real tree: $tools_out"
}
