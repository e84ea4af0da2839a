# --window rules: windows opened and closed by events, without anyone
# typing start. Real targets, real signals, files, clocks and uprobes.

# The window record dynprof writes into --output (one JSON line per window).
windows_record() { cat "$T"/o/*_dynprof_windows 2>/dev/null; }
field() { # field LINE-REGEX EDGE KEY: KEY's number in EDGE (start or stop) of the first record line matching
	windows_record | grep -E -- "$1" | head -1 | sed -nE "s/.*\"$2\":\{[^}]*\"$3\":([0-9]+).*/\1/p"
}

test_trigger_after_durations_open_and_close_without_input() {
	local pid; pid=$(start_target)
	dp --pid=$pid --output=$T/o --window=start=+300ms,stop=+400ms < /dev/null
	expect_status 0 $?
	expect_line "^\[INFO\] rule 1: start=\+300ms fired for pid $pid$"
	expect_line "^dynamic profiling for pid $pid start success$"
	expect_line "^dynamic profiling for pid $pid stop success$"
	expect_line "^\[INFO\] every --window rule is done: dynamic profiling ends$"
	[ "$(prof_dirs_of $T/o $pid | wc -l)" = 1 ] || fail "expected one PROF_ folder: $(ls $T/o)"
	local line; line=$(windows_record | grep "\"pid\":$pid")
	[ -n "$line" ] || fail "no window record"
	local ack stop; ack=$(echo "$line" | sed -E 's/.*"start":\{[^}]*"ack_us":([0-9]+).*/\1/')
	stop=$(echo "$line" | sed -E 's/.*"stop":\{[^}]*"fired_us":([0-9]+).*/\1/')
	# (rules count in whole milliseconds from the ack: 399.6 ms is 400 on their clock)
	local held=$(( (stop - ack + 999) / 1000 ))
	[ $held -ge 400 ] && [ $held -lt 1500 ] || fail "window held $held ms, expected 400 ms: $line"
}

test_trigger_signals_start_and_stop() {
	local pid; pid=$(start_target)
	dp_background --pid=$pid --output=$T/o --window=start=signal:USR1,stop=signal:USR2
	wait_until 10 signal_blocked $DP_PID USR1 || fail "USR1 never blocked: $(cat $T/out)"
	sleep 0.3
	grep -q "start success" $T/out && fail "started before the signal: $(cat $T/out)"
	kill -USR1 $DP_PID
	wait_until 5 grep -q "start success" $T/out || fail "USR1 did not start: $(cat $T/out)"
	kill -USR2 $DP_PID
	wait_until 5 grep -q "stop success" $T/out || fail "USR2 did not stop: $(cat $T/out)"
	exec 7>&-
	wait $DP_PID
	expect_status 0 $?
	expect_line "rule 1: stop=signal:USR2 fired for pid $pid"
}

test_trigger_file_appearing() {
	local pid; pid=$(start_target)
	dp_background --pid=$pid --output=$T/o --window=start=file:$T/go,stop=file:$T/halt
	sleep 0.3
	touch $T/go
	wait_until 5 grep -q "start success" $T/out || fail "file did not start: $(cat $T/out)"
	grep -q "stop success" $T/out && fail "stopped early"
	touch $T/halt
	wait_until 5 grep -q "stop success" $T/out || fail "file did not stop: $(cat $T/out)"
	exec 7>&-
	wait $DP_PID
	expect_status 0 $?
}

test_trigger_at_wall_clock_time() {
	local pid; pid=$(start_target)
	local at=$(( $(date +%s) + 2 ))
	local iso; iso=$(date -u -d @$at +%Y-%m-%dT%H:%M:%SZ)
	dp --pid=$pid --output=$T/o --window=start=at:$iso,stop=+100ms --window=start=at:@$at,stop=+100ms < /dev/null
	expect_status 0 $?
	# Never before the second: the clock is read, not estimated.
	local r fired
	for r in 1 2; do
		fired=$(field "\"rule\":$r" start fired_us)
		[ -n "$fired" ] || { windows_record; fail "no record of rule $r"; }
		[ $fired -ge $((at * 1000000)) ] && [ $fired -lt $(( (at + 1) * 1000000 )) ] ||
			fail "rule $r fired at $fired us, expected within a second after $at s"
	done
	[ "$(windows_record | wc -l)" = 2 ] || fail "expected 2 window records (overlapping rules): $(windows_record)"
	[ "$(count_lines "start success")" = 1 ] || fail "the overlapping rules sent START twice"
}

test_trigger_at_in_the_past_refused_before_connecting() {
	local pid; pid=$(start_target)
	dp --pid=$pid --output=$T/o --window=start=at:2020-01-01T00:00:00Z < /dev/null
	expect_status 255 $?
	expect_line "^\[ERROR\] Argument --window: .*at:2020-01-01T00:00:00Z is in the past"
	expect_no_line "Start profiling"
}

test_trigger_bad_rules_refused() {
	local pid; pid=$(start_target)
	local bad
	for bad in "stop=+1s" "start=exit" "start=open,stop=open" "start=+1s,repeat=3" "start=call:x:y#0" "start=+1x" \
		   "start=signal:KILL" "start=signal:NOPE" "start=+1s,stop=+1s,bogus=1" "start=open,stop=+1s,repeat=2"; do
		dp --pid=$pid --output=$T/o --window="$bad" < /dev/null
		expect_status 255 $?
		expect_line "^\[ERROR\] Argument --window: " 
		expect_no_line "Start profiling"
	done
}

test_trigger_call_counts_in_the_kernel() {
	local pid; pid=$(start_demo --step-ms=2)
	dp --pid=$pid --output=$T/o --events=json:$T/ev \
	   --window=start=call:demo_task:demo_step#100,stop=call:demo_task:demo_step#50 < /dev/null
	expect_status 0 $?
	expect_line "rule 1: start=call:demo_task:demo_step#100 fired for pid $pid \(call 100\)$"
	expect_line "rule 1: stop=call:demo_task:demo_step#50 fired for pid $pid \(call 150\)$"
	grep -q "\"event\":\"trigger\".*\"edge\":\"start\".*\"count\":100" $T/ev || fail "no trigger event: $(cat $T/ev)"
	[ "$(prof_dirs_of $T/o $pid | wc -l)" = 1 ] || fail "expected one PROF_ folder"
}

test_trigger_call_symbol_missing_refused_before_start() {
	local pid; pid=$(start_demo)
	dp --pid=$pid --output=$T/o --window=start=call:demo_task:no_such_step#3 < /dev/null
	expect_status 255 $?
	expect_line "^\[ERROR\] dynprof: pid $pid: call:demo_task:no_such_step can never fire: no function no_such_step in "
	# Refused before anything starts: the target is not even connected to.
	expect_no_line "start success|quit success|Start profiling"
	[ ! -e $T/o ] || fail "--output made for a refused run"
}

test_trigger_open_waits_for_the_card() {
	local pid; pid=$(start_target CARD_USER_OPEN_DELAY_MS=1200)
	dp --pid=$pid --output=$T/o --device="$T/dev/davinci*" --window=start=open,stop=+200ms < /dev/null
	expect_status 0 $?
	expect_line "rule 1: start=open fired for pid $pid"
	expect_line "^dynamic profiling for pid $pid start success$"
	expect_no_line "has not been set up"
}

test_trigger_not_set_device_retried_until_the_device_is_set() {
	local pid; pid=$(start_target CARD_USER_OPEN_DELAY_MS=1000)
	dp --pid=$pid --output=$T/o --window=start=+50ms,stop=+200ms < /dev/null
	expect_status 0 $?
	expect_line "rule 1: pid $pid has no device yet: START retried until it has"
	expect_line "^dynamic profiling for pid $pid start success$"
	[ "$(prof_dirs_of $T/o $pid | wc -l)" = 1 ] || fail "expected one PROF_ folder"
}

test_trigger_repeat_every() {
	local pid; pid=$(start_target)
	dp --pid=$pid --output=$T/o --window=start=+100ms,stop=+150ms,every=500ms,repeat=3 < /dev/null
	expect_status 0 $?
	[ "$(prof_dirs_of $T/o $pid | wc -l)" = 3 ] || fail "expected 3 PROF_ folders: $(ls $T/o)"
	local a b; a=$(field '"window":1' start fired_us); b=$(field '"window":2' start fired_us)
	local gap=$(( (b - a) / 1000 ))
	[ $gap -ge 480 ] && [ $gap -lt 1200 ] || fail "windows $gap ms apart, expected every 500 ms"
}

test_trigger_repeat_needs_a_new_signal() {
	local pid; pid=$(start_target)
	dp_background --pid=$pid --output=$T/o --window=start=signal:USR1,stop=+100ms,repeat=2
	wait_until 10 signal_blocked $DP_PID USR1 || fail "USR1 never blocked: $(cat $T/out)"
	kill -USR1 $DP_PID
	wait_until 5 grep -q "stop success" $T/out || fail "first window did not close"
	sleep 0.3
	[ "$(count_lines "start success")" = 1 ] || fail "second window opened without a new signal"
	kill -USR1 $DP_PID
	wait $DP_PID
	expect_status 0 $?
	[ "$(count_lines "stop success")" = 2 ] || fail "expected two windows"
}

test_trigger_reconnects_past_the_request_limit() {
	# 9.x ends a connection after answering 101 requests: dynprof
	# reconnects after 50 windows (100 requests), before the 101st.
	local pid; pid=$(start_target)
	dp --pid=$pid --output=$T/o --window=start=+10ms,stop=+10ms,every=40ms,repeat=52 < /dev/null
	expect_status 0 $?
	[ "$(prof_dirs_of $T/o $pid | wc -l)" = 52 ] || { cat $T/out; fail "expected 52 PROF_ folders"; }
	[ "$(count_lines "pid $pid: reconnected before the server's request limit \(101 requests")" = 1 ] ||
		fail "expected one reconnection"
	expect_no_line "Server disconnected"
}

test_trigger_sigterm_stops_a_rule_window() {
	local pid; pid=$(start_target)
	dp_background --pid=$pid --output=$T/o --window=start=+100ms
	wait_until 5 grep -q "start success" $T/out || fail "no start"
	kill -TERM $DP_PID
	wait $DP_PID
	expect_status 143 $?
	# STOP first (the window's data flushed), then QUIT: not QUIT alone.
	expect_line "^dynamic profiling for pid $pid stop success$"
	expect_line "^dynamic profiling for pid $pid quit success$"
	[ "$(grep -n 'stop success' $T/out | cut -d: -f1)" -lt "$(grep -n 'quit success' $T/out | cut -d: -f1)" ] ||
		fail "STOP did not come before QUIT: $(cat $T/out)"
	[ "$(prof_dirs_of $T/o $pid | wc -l)" = 1 ] || fail "window not saved"
	windows_record | grep -q '"stop":{"condition":"exit or quit"' || fail "quit not recorded: $(windows_record)"
}

# Steps of 10-12 ms: the stop counts from the start's call, and its threshold
# is armed when START is answered; 40 calls leave that answer 400 ms.
test_trigger_launch_every_rank_counts_its_own_calls() {
	local card; card=$(make_card 0)
	cat > $T/ranks.sh <<-EOS
	#!/bin/sh
	$DEMO --quiet --device=$card --steps=250 --step-ms=10 &
	$DEMO --quiet --device=$card --steps=250 --step-ms=12 &
	wait
	EOS
	chmod +x $T/ranks.sh
	dp --dynamic=on --output=$T/o --app-stdin --device="$T/dev/davinci*" \
	   --window=start=call:demo_task:demo_step#100,stop=call:demo_task:demo_step#40 $T/ranks.sh < /dev/null
	expect_status 0 $?
	[ "$(count_lines "rule 1: start=.* \(call 100\)$")" = 2 ] || fail "expected both ranks to fire at call 100"
	[ "$(count_lines "rule 1: stop=.* \(call 140\)$")" = 2 ] || { cat $T/out; fail "expected both ranks to stop at call 140"; }
	[ "$(ls -d $T/o/PROF_* | wc -l)" = 2 ] || fail "expected two PROF_ folders: $(ls $T/o)"
}

test_trigger_exec_glob_in_launch_mode() {
	local card; card=$(make_card 0)
	cat > $T/app.sh <<-EOS
	#!/bin/sh
	env LD_PRELOAD=$AGENT_SO DYNPROF_AGENT_DEVICES='$T/dev/davinci*' $CARD_USER $card 2
	EOS
	chmod +x $T/app.sh
	dp --dynamic=on --output=$T/o --device="$T/dev/davinci*" --app-stdin \
	   --window=start=exec:*card_user,stop=+200ms --window=start=exec:*never_this $T/app.sh < /dev/null
	expect_status 0 $?
	expect_line "rule 1: start=exec:\*card_user fired for pid [0-9]+$"
	expect_no_line "rule 2: start"
	[ "$(ls -d $T/o/PROF_* | wc -l)" = 1 ] || fail "expected one PROF_ folder: $(ls $T/o)"
}

test_trigger_target_exit_before_its_window_is_not_success() {
	local pid; pid=$(start_target)
	dp_background --pid=$pid --output=$T/o --window=start=signal:USR1
	# Connected first (under load a fixed 0.3 s was not enough: the target
	# was gone before dynprof looked, "serves no dynamic profiling socket").
	wait_until 20 grep -q "Start profiling" $T/out || fail "dynprof never connected: $(cat $T/out)"
	kill -TERM $pid
	wait $DP_PID
	expect_status 1 $?
	expect_no_line "every --window rule is done"
	expect_no_line "start success"
}

test_trigger_stop_exit_closes_with_the_target() {
	local pid; pid=$(start_target)
	dp_background --pid=$pid --output=$T/o --events=json:$T/ev --window=start=+100ms,stop=exit
	wait_until 5 grep -q "start success" $T/out || fail "no start: $(cat $T/out)"
	kill -TERM $pid
	wait $DP_PID
	expect_status 1 $?
	[ "$(prof_dirs_of $T/o $pid | wc -l)" = 1 ] || fail "the window's folder was not reported: $(cat $T/out)"
	grep -q '"event":"trigger".*"edge":"start","condition":"+100ms"' $T/ev || fail "no trigger event: $(cat $T/ev)"
	windows_record | grep -q "\"pid\":$pid.*\"stop\":{\"condition\":\"exit\"" ||
		fail "the window was not recorded: $(windows_record)"
}

# A trigger event past its defaults: the second rule's start and its stop
# each give one event naming rule 2, its edge and its condition.
test_trigger_events_name_the_rule_and_the_stop_edge() {
	local pid; pid=$(start_target)
	dp_background --pid=$pid --output=$T/o --events=json:$T/ev \
		--window=start=+1h,stop=+2h --window=start=+100ms,stop=+200ms
	wait_until 10 grep -q "rule 2: stop=+200ms fired for pid $pid" $T/out || fail "rule 2 did not stop: $(cat $T/out)"
	dp_send quit
	wait_until 20 all_gone $DP_PID || fail "dynprof did not end"
	local got; got=$(jq -c "select(.event == \"trigger\") | [.pid, .rule, .edge, .condition]" $T/ev | tr '\n' ' ')
	[ "$got" = "[$pid,2,\"start\",\"+100ms\"] [$pid,2,\"stop\",\"+200ms\"] " ] ||
		fail "expected rule 2's start and stop trigger events, got: $got"
}

test_trigger_call_in_a_library_loaded_later() {
	local card; card=$(make_card 0)
	# Serves the protocol (preloaded agent), holds a card, then after the
	# go-ahead loads libdpcalls.so and, 300 ms later (dynprof reads the maps
	# of such targets every 20 ms), calls dpcalls_hit 300 times.
	env PROFILING_MODE=dynamic LD_PRELOAD="$AGENT_SO" DYNPROF_AGENT_DEVICES="$T/dev/davinci*" \
		"$B/tests/peers/caller" open=$card wait dlopen=$B/tests/libdpcalls.so sleep=300 libcall=300 pause \
		> $T/caller.log 2>&1 < /dev/null &
	local pid=$!
	remember_pid $pid
	wait_until 5 has_socket $pid || fail "caller never opened its socket"
	dp_background --pid=$pid --output=$T/o --window=start=call:libdpcalls.so:dpcalls_hit#100,stop=call:libdpcalls.so:dpcalls_hit#50
	wait_until 5 grep -q "libdpcalls.so not loaded yet" $T/out || fail "no pending notice: $(cat $T/out)"
	kill -USR1 $pid
	wait $DP_PID
	expect_status 0 $?
	expect_line "pid $pid: .*libdpcalls.so loaded: counting calls of dpcalls_hit"
	expect_line "rule 1: start=call:libdpcalls.so:dpcalls_hit#100 fired for pid $pid \(call 100\)$"
	# The 300 calls take ~3 ms, less than START's round trip: the stop
	# threshold (150) is already passed when the window opens, and fires then.
	local at; at=$(sed -nE "s/.*stop=call:libdpcalls.so:dpcalls_hit#50 fired for pid $pid \(call ([0-9]+)\)$/\1/p" $T/out)
	[ -n "$at" ] && [ "$at" -ge 150 ] && [ "$at" -le 300 ] || { cat $T/out; fail "stop fired at call '$at'"; }
}

# A rule's signal sent before dynprof has joined its target (here held
# stopped until the signal is sent): it waits, blocked from the start, and
# fires the rule once the engine runs; before, USR1's default action ended
# dynprof during the join.
test_trigger_signal_sent_during_the_join_waits_for_the_rule() {
	local pid; pid=$(start_target)
	kill -STOP $pid
	dp_background --pid=$pid --output=$T/o --window=start=signal:USR1,stop=+100ms
	wait_until 10 signal_blocked $DP_PID USR1 || { kill -CONT $pid; fail "USR1 not blocked while joining: $(cat $T/out)"; }
	grep -q "Start profiling" $T/out && { kill -CONT $pid; fail "joined a stopped target: $(cat $T/out)"; }
	kill -USR1 $DP_PID
	kill -CONT $pid
	wait_until 10 grep -q "rule 1: stop=+100ms fired for pid $pid$" $T/out ||
		fail "no rule window (dynprof alive: $(kill -0 $DP_PID 2>/dev/null && echo yes || echo no)): $(cat $T/out)"
	exec 7>&-
	wait $DP_PID
	expect_status 0 $?
}
