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
