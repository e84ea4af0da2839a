# --events=json[:PATH]: JSON lines about targets, windows and errors.

# ev_line EVENT [EXTRA-REGEX] [FILE]: the events file has such an object.
ev_line() {
	grep -Eq -- "\"event\":\"$1\"[^}]*${2:-}" "${3:-$T/ev}" ||
		{ cat "${3:-$T/ev}"; fail "expected a $1 event matching: ${2:-}"; }
}

test_events_attach_start_stop_quit() {
	local pid; pid=$(start_target)
	printf 'start\nstop\nquit\n' | dp --pid=$pid --output=$T/o --events=json:$T/ev --device="$T/dev/davinci*"
	expect_status 0 $?
	[ "$(stat -c %a $T/ev)" = 640 ] || fail "events file mode $(stat -c %a $T/ev)"
	# The same shape as launch and follow mode's: its container, command line and cards.
	ev_line target-join "\"pid\":$pid,\"nspid\":$pid,\"container\":null,\"command\":\"[^\"]*card_user [^\"]* 600\",\"cards\":\\[0\\]"
	ev_line window-open "\"pid\":$pid"
	ev_line window-close "\"pid\":$pid,\"prof\":\\[\"$T/o/PROF_"
	ev_line target-leave "\"pid\":$pid,\"reason\":\"quit\""
	local prof; prof=$(grep '"window-close"' $T/ev | sed 's/.*"prof":\["\([^"]*\)".*/\1/')
	[ -d "$prof/host" ] || fail "window-close names no folder: $prof"
	grep -q '"time_us":[0-9]\{16\},' $T/ev || fail "time_us not in microseconds: $(cat $T/ev)"
	[ "$(grep -o '"event":"[a-z-]*"' $T/ev | tr '\n' ' ')" = \
	  '"event":"target-join" "event":"window-open" "event":"window-close" "event":"target-leave" ' ] ||
		fail "events out of order: $(cat $T/ev)"
	expect_no_line '"event"'
}

test_events_on_stdout_among_console_lines() {
	local pid; pid=$(start_target)
	printf 'start\nstop\n' | dp --pid=$pid --output=$T/o --events=json
	expect_status 0 $?
	expect_line "^dynamic profiling for pid $pid start success$"
	expect_line "^\{\"event\":\"window-open\",\"time_us\":[0-9]+,\"pid\":$pid\}$"
	expect_line "^\{\"event\":\"target-leave\",.*\"reason\":\"quit\"\}$"
}

test_events_launch_worker_joins_and_exits() {
	local app; app=$(app_script run.sh <<-EOS
	#!/bin/sh
	env LD_PRELOAD=$AGENT_SO DYNPROF_AGENT_DEVICES='$T/dev/davinci*' $CARD_USER $(make_card 0) 2
	EOS
	)
	dp --dynamic=on --output=$T/o --device="$T/dev/davinci*" --events=json:$T/ev --app-stdin $app < /dev/null
	expect_status 0 $?
	ev_line target-join '"command":"[^"]*card_user[^"]*","cards":\[0\]'
	ev_line target-leave '"reason":"exit"'
}

test_events_error_for_a_failed_start() {
	local s; s=$(start_bad_peer garbage)
	printf 'start\n' | dp --pid=$s --output=$T/o --events=json:$T/ev
	expect_status 1 $?
	ev_line error "\"pid\":$s,\"message\":\"dynamic profiling for pid $s start failed: unexpected reply \\(type 99, code 77\\)\""
	ev_line target-leave "\"pid\":$s,\"reason\":\"error\""
}

test_events_bad_value_refused() {
	dp --pid=1 --events=xml
	expect_status 255 $?
	expect_line "^\[ERROR\] Argument --events: invalid value: xml\. Please input 'json' or 'json:PATH'\.$"
}

test_events_unwritable_path_refused() {
	dp --pid=1 --events=json:$T/no/such/dir/ev
	expect_status 255 $?
	expect_line "^\[ERROR\] Argument --events: cannot write $T/no/such/dir/ev: No such file or directory\.$"
}

# app_script NAME <<EOF ... EOF: an executable script in $T.
app_script() { cat > $T/$1; chmod +x $T/$1; echo $T/$1; }
