# libdynprof_agent.a exports only the API of agent.h, as the .so does: a
# program may use any other name for itself.

# The API: the functions declared (at line start) in agent.h.
api_names() {
	grep -E '^[a-z].*\<dynprof_agent_[a-z_]+\(' "$DYNPROF_TESTS/../include/dynprof/agent.h" |
		grep -oE 'dynprof_agent_[a-z_]+\(' | tr -d '(' | sort -u
}

test_static_agent_exports_only_the_api() {
	api_names > $T/api
	[ -s $T/api ] || fail "no API names found in agent.h"
	nm -g --defined-only "$B/libdynprof_agent.a" | awk 'NF == 3 { print $3 }' | sort -u > $T/exported
	diff $T/api $T/exported > $T/diff || fail "archive exports differ from agent.h (< API only, > exported only): $(tr '\n' ' ' < $T/diff)"
}

test_static_agent_links_beside_a_programs_own_internal_names() {
	[ -x "$B/tests/agent_names" ] || fail "no $B/tests/agent_names (it links only if the archive hides its names)"
	"$B/tests/agent_names" 60 > $T/names.log 2>&1 &
	local pid=$!
	remember_pid $pid
	wait_until 5 has_socket $pid || fail "agent_names never opened its socket: $(cat $T/names.log)"
	printf 'start\nstop\n' | dp --pid=$pid --output=$T/o
	expect_status 0 $?
	expect_line "^dynamic profiling for pid $pid start success$"
	expect_line "^dynamic profiling for pid $pid stop success$"
	[ "$(prof_dirs_of $T/o $pid | wc -l)" -eq 1 ] || fail "expected one window folder"
	kill -TERM $pid
	wait $pid
	expect_status 0 $?
	[ ! -e "$(socket_of $pid)" ] || fail "socket left after shutdown"
}
