# No target is ever left collecting: signals stop every open window first.

windows_open() { [ "$(grep -c 'start success' $T/out)" -eq "$1" ]; }

# Run dynprof in the background, send `start`, wait for every window.
start_session_with_window() { # start_session_with_window PIDLIST
	dp_background --pid="$1" --output=$T/o
	dp_send start
	local n; n=$(echo "$1" | tr ',' '\n' | wc -l)
	wait_until 10 windows_open "$n" || fail "windows did not open: $(cat $T/out)"
}

signal_stops_every_window() { # signal_stops_every_window SIG STATUS
	local a b; a=$(start_target); b=$(start_target)
	start_session_with_window $a,$b
	kill -$1 $DP_PID
	wait $DP_PID
	expect_status $2 $?
	expect_line "^\[INFO\] received SIG$1: stopping open windows and quitting$"
	for p in $a $b; do
		expect_line "^dynamic profiling for pid $p stop success$"
		expect_line "^dynamic profiling for pid $p quit success$"
		[ -s "$(prof_dirs_of $T/o $p)/host/end_info" ] || fail "pid $p still collecting after SIG$1"
	done
}

test_sigterm_stops_every_open_window() { signal_stops_every_window TERM 143; }
test_sigint_stops_every_open_window() { signal_stops_every_window INT 130; }
test_sighup_stops_every_open_window() { signal_stops_every_window HUP 129; }

test_quit_stops_only_open_windows() {
	local a b; a=$(start_target); b=$(start_target_without_card)
	printf 'start\nquit\n' | dp --pid=$a,$b --output=$T/o
	expect_status 0 $?
	expect_line "^dynamic profiling for pid $a stop success$"
	expect_no_line "pid $b (stop|has not started)"
	expect_line "^dynamic profiling for pid $b quit success$"
}
