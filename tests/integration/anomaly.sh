# Windows on anomalies: slow:, gap:, stall: (docs/TRIGGERS.md), timed in
# the kernel on a real workload, tests/peers/stepper, whose dp_step() takes
# the time it is told to. Its `wait` action blocks until SIGUSR1: every
# stepper here waits first until dynprof has probed it (attached), so every
# call is seen, and waits again before the anomaly, so a test knows nothing
# slow happened before it lets the workload go on. Bounds are wide: the
# sleeps of a loaded 2-core machine overshoot.

STEPPER=$B/tests/peers/stepper

windows_record() { cat "$T"/o/*_dynprof_windows 2>/dev/null; }
field() { # field EDGE KEY: KEY's number in EDGE (start or stop) of the first record line
	windows_record | head -1 | sed -nE "s/.*\"$1\":\{[^}]*\"$2\":([0-9]+).*/\1/p"
}

# start_stepper ACTION...: the stepper with the agent and a card; echoes its pid once it listens.
start_stepper() {
	local card; card=$(make_card 0)
	env PROFILING_MODE=dynamic LD_PRELOAD="$AGENT_SO" DYNPROF_AGENT_DEVICES="$T/dev/davinci*" \
		STEPPER_LOG_RETURNS=1 STEPPER_LOG_MIN_MS=100 \
		"$STEPPER" open=$card wait "$@" > "$T/stepper.log" 2>&1 < /dev/null &
	local pid=$!
	remember_pid $pid
	wait_until 5 has_socket $pid || fail "stepper $pid never opened its socket: $(cat $T/stepper.log)"
	echo $pid
}

# attached PID: once dynprof has probed the stepper (it says so after its
# targets' probes are attached), let it run past its first wait.
attached() {
	wait_until 10 grep -q "Start profiling" $T/out || fail "dynprof never started: $(cat $T/out)"
	kill -USR1 $1
}

# done_action ACTION: wait until the stepper finished ACTION.
done_action() {
	wait_until 20 grep -qF "stepper: $1 done" $T/stepper.log || fail "stepper never did $1: $(cat $T/stepper.log)"
}

# rules_done PID WHY: the stepper goes on (USR1), every rule ends, dynprof exits 0.
rules_done() {
	kill -USR1 $1
	wait_until 10 grep -q "every --window rule is done" $T/out || fail "$2: $(cat $T/out)"
	exec 7>&-
	wait $DP_PID
	expect_status 0 $?
}


# No test waits a while to see that no window opened before its anomaly:
# dynprof sees a target's calls in their order, so a window that wrongly
# opened on an ordinary call is the first one, recorded with that call's
# measure. Each test checks instead, once the run is over, that its first
# window's measure (or its time) is the anomaly's.

# fired_after_the_slow_call: the first window's start fired once the
# stepper's slow call had returned (its "return us=" line, logged for calls
# of STEPPER_LOG_MIN_MS or more), never on what came before it.
fired_after_the_slow_call() {
	local ret fired
	ret=$(sed -n 's/^stepper: return us=//p' $T/stepper.log | head -1)
	fired=$(field start fired_us)
	[ -n "$ret" ] && [ -n "$fired" ] || fail "expected the slow call's return and the start's firing time; saw '$ret' and '$fired': $(windows_record)"
	[ "$fired" -ge "$ret" ] || fail "expected the window to fire after the slow call returned ($ret us); it fired at $fired us: $(windows_record)"
}

test_slow_window_opens_after_the_first_slow_call_and_not_before() {
	local pid; pid=$(start_stepper step=30,1,2 wait step=1,300,2 step=20,1,2 pause)
	dp_background --pid=$pid --output=$T/o --events=json:$T/ev '--window=start=slow:stepper:dp_step>100ms,stop=+200ms'
	attached $pid
	done_action step=30,1,2
	kill -USR1 $pid
	wait_until 10 grep -q "start success" $T/out || fail "no window after the slow call: $(cat $T/out)"
	wait_until 10 grep -q "every --window rule is done" $T/out || fail "the window never closed: $(cat $T/out)"
	exec 7>&-
	wait $DP_PID
	expect_status 0 $?
	expect_line "rule 1: start=slow:stepper:dp_step>100ms fired for pid $pid \(duration [0-9.]+ ms, typical [0-9.]+ ms\)$"
	local measured fired ret
	measured=$(field start measured_us); fired=$(field start fired_us)
	ret=$(sed -n 's/^stepper: return us=//p' $T/stepper.log | head -1)
	[ -n "$measured" ] && [ $measured -ge 300000 ] && [ $measured -lt 3000000 ] ||
		fail "measured $measured us, expected the 300 ms call: $(windows_record)"
	[ -n "$ret" ] && [ $fired -ge $ret ] || fail "fired at $fired us, before the slow call returned at $ret us"
	[ $((fired - ret)) -lt 2000000 ] || fail "fired $((fired - ret)) us after the slow call returned"
	windows_record | grep -q '"typical_us":[0-9]' || fail "no typical value in the record: $(windows_record)"
	grep -q '"event":"trigger".*"condition":"slow:stepper:dp_step>100ms","measured_us":[0-9]*,"typical_us":[0-9]*' $T/ev ||
		fail "no trigger event with the measure: $(cat $T/ev)"
}

# The second call is 15 times the first, inside the warm-up: no window
# until the slow call after it (the typical value is then about 5 ms).
test_slow_multiple_waits_for_the_warm_up() {
	local pid; pid=$(start_stepper step=1,2,1 step=1,30,1 step=20,5,1 wait step=1,120,1 step=5,5,1 pause)
	dp_background --pid=$pid --output=$T/o '--window=start=slow:stepper:dp_step>3x,stop=+200ms'
	attached $pid
	done_action step=20,5,1
	rules_done $pid "no window after the 3x call"
	local measured typical
	measured=$(field start measured_us); typical=$(field start typical_us)
	[ $measured -ge 120000 ] || fail "measured $measured us, expected the 120 ms call: $(windows_record)"
	[ $typical -ge 4000 ] && [ $typical -lt 30000 ] || fail "typical $typical us, expected about 5 ms: $(windows_record)"
	[ $((measured * 1000)) -gt $((typical * 3000)) ] || fail "fired below 3x: $(windows_record)"
	fired_after_the_slow_call
}

test_gap_between_two_calls() {
	local pid; pid=$(start_stepper step=20,0,10 wait step=5,0,10 pause)
	dp_background --pid=$pid --output=$T/o '--window=start=gap:stepper:dp_step>250ms,stop=+200ms'
	attached $pid
	done_action step=20,0,10
	sleep 0.6 # the gap itself: the stepper stays blocked this long (the anomaly, not a wait)
	rules_done $pid "no window after the gap"
	local measured typical
	measured=$(field start measured_us); typical=$(field start typical_us)
	[ $measured -ge 600000 ] && [ $measured -lt 20000000 ] || fail "gap $measured us, expected the blocked time: $(windows_record)"
	[ $typical -ge 5000 ] && [ $typical -lt 100000 ] || fail "typical gap $typical us, expected about 10 ms"
}

# Two slow calls in a row, two windows (repeat=): the second's typical value
# is still the fast calls' (~5 ms), the first slow call was not folded in.
test_slow_repeats_and_a_slow_call_is_not_typical() {
	local pid; pid=$(start_stepper step=20,5,0 step=2,500,0 step=5,5,0 pause)
	dp_background --pid=$pid --output=$T/o '--window=start=slow:stepper:dp_step>100ms,stop=+20ms,repeat=2'
	attached $pid
	wait_until 20 grep -q "every --window rule is done" $T/out || fail "not two windows: $(cat $T/out)"
	exec 7>&-
	wait $DP_PID
	expect_status 0 $?
	[ "$(windows_record | wc -l)" = 2 ] || fail "expected 2 windows: $(windows_record)"
	local second measured typical
	second=$(windows_record | sed -n 2p)
	measured=$(echo "$second" | sed -nE 's/.*"start":\{[^}]*"measured_us":([0-9]+).*/\1/p')
	typical=$(echo "$second" | sed -nE 's/.*"start":\{[^}]*"typical_us":([0-9]+).*/\1/p')
	[ "$measured" -ge 500000 ] || fail "measured $measured us, expected the second 500 ms call: $second"
	[ "$typical" -ge 4000 ] && [ "$typical" -lt 20000 ] || fail "typical $typical us after a slow call, expected ~5 ms: $second"
}

# Two long pauses, two windows: each a new gap (repeat= needs a new one), and
# the first long gap was not folded into the typical one (still ~10 ms).
test_gap_multiple_repeats_on_each_new_gap() {
	local pid; pid=$(start_stepper step=20,0,10 sleep=300 step=20,0,10 sleep=300 step=20,0,10 pause)
	dp_background --pid=$pid --output=$T/o '--window=start=gap:stepper:dp_step>3x,stop=+100ms,repeat=2'
	attached $pid
	wait_until 20 grep -q "every --window rule is done" $T/out || fail "not two windows: $(cat $T/out)"
	exec 7>&-
	wait $DP_PID
	expect_status 0 $?
	[ "$(windows_record | wc -l)" = 2 ] || fail "expected 2 windows: $(windows_record)"
	local line measured typical
	while read -r line; do
		measured=$(echo "$line" | sed -nE 's/.*"start":\{[^}]*"measured_us":([0-9]+).*/\1/p')
		typical=$(echo "$line" | sed -nE 's/.*"start":\{[^}]*"typical_us":([0-9]+).*/\1/p')
		[ "$measured" -ge 300000 ] || fail "gap $measured us, expected the 300 ms pause: $line"
		[ "$typical" -ge 5000 ] && [ "$typical" -lt 60000 ] || fail "typical gap $typical us, expected ~10 ms: $line"
	done < <(windows_record)
}

# The stall window opens while the stepper is blocked and ends when it calls again.
test_stall_opens_during_the_stall_and_stops_when_it_moves() {
	local pid; pid=$(start_stepper step=10,0,10 wait step=10,0,10 pause)
	dp_background --pid=$pid --output=$T/o '--window=start=stall:stepper:dp_step>400ms,stop=call:stepper:dp_step#1'
	attached $pid
	done_action step=10,0,10
	local blocked_us; blocked_us=$(date +%s%6N)
	wait_until 10 grep -q "start success" $T/out || fail "no window during the stall: $(cat $T/out)"
	[ "$(grep -c "stepper: wait done" $T/stepper.log)" = 1 ] || fail "the stepper moved before the window opened"
	# Open while stuck, and it stays open: no call comes.
	sleep 0.5
	grep -q "stop success" $T/out && fail "the stall window closed while still stalled: $(cat $T/out)"
	kill -USR1 $pid
	wait_until 10 grep -q "stop success" $T/out || fail "the window did not stop when the calls resumed: $(cat $T/out)"
	exec 7>&-
	wait $DP_PID
	expect_status 0 $?
	expect_line "rule 1: start=stall:stepper:dp_step>400ms fired for pid $pid \(stalled [0-9.]+ ms"
	expect_line "rule 1: stop=call:stepper:dp_step#1 fired for pid $pid \(call [0-9]+\)$"
	local measured start_fired; measured=$(field start measured_us); start_fired=$(field start fired_us)
	[ $measured -ge 400000 ] && [ $measured -lt 5000000 ] || fail "stalled $measured us at the firing: $(windows_record)"
	[ $start_fired -ge $((blocked_us + 300000)) ] || fail "fired $(( (start_fired - blocked_us) / 1000 )) ms after the stall began"
}

# Four threads in dp_step at once, 20 ms each, started 5 ms apart so that
# some thread is always inside: no call is slow (a per-process timing
# would see one endless call); then one thread's 400 ms call is.
test_slow_threads_time_their_own_calls() {
	local pid; pid=$(start_stepper threads=4,20,20,3,5 wait step=1,400,0 pause)
	dp_background --pid=$pid --output=$T/o '--window=start=slow:stepper:dp_step>150ms,stop=+200ms'
	attached $pid
	done_action threads=4,20,20,3,5
	kill -USR1 $pid
	wait_until 10 grep -q "every --window rule is done" $T/out || fail "no window after the slow call: $(cat $T/out)"
	exec 7>&-
	wait $DP_PID
	local measured typical; measured=$(field start measured_us); typical=$(field start typical_us)
	[ $measured -ge 400000 ] && [ $measured -lt 3000000 ] || fail "measured $measured us: $(windows_record)"
	[ $typical -ge 15000 ] && [ $typical -lt 100000 ] || fail "typical $typical us, expected about 20 ms"
	fired_after_the_slow_call
}

# dp_recurse(3, 10) takes 40 ms, its inner calls 30, 20 and 10: only the
# outermost is timed, so the typical value is about 40 ms, not 25.
test_slow_recursion_times_the_outermost_call() {
	local pid; pid=$(start_stepper recurse=12,3,10 wait recurse=1,3,100 pause)
	dp_background --pid=$pid --output=$T/o '--window=start=slow:stepper:dp_recurse>3x,stop=+200ms'
	attached $pid
	done_action recurse=12,3,10
	kill -USR1 $pid
	wait_until 10 grep -q "every --window rule is done" $T/out || fail "no window after the slow call: $(cat $T/out)"
	exec 7>&-
	wait $DP_PID
	local measured typical; measured=$(field start measured_us); typical=$(field start typical_us)
	[ $typical -ge 36000 ] && [ $typical -lt 90000 ] || fail "typical $typical us, expected the outermost 40 ms: $(windows_record)"
	[ $measured -ge 400000 ] || fail "measured $measured us, expected the outermost 400 ms: $(windows_record)"
}

test_wait_slow_in_commands() {
	local pid; pid=$(start_stepper step=10,1,1 wait step=1,200,1 pause)
	printf '%s\n' 'wait slow:stepper:dp_step>100ms' start 'sleep 100ms' stop quit > $T/cmds
	dp_background --pid=$pid --output=$T/o --commands=$T/cmds --events=json:$T/ev
	attached $pid
	done_action step=10,1,1
	kill -USR1 $pid
	wait_until 10 grep -q "quit success" $T/out || fail "the wait never ended: $(cat $T/out)"
	exec 7>&-
	wait $DP_PID
	expect_status 0 $?
	expect_line "start success"
	# The wait ended at the slow call: the window opened after it returned.
	local ret opened
	ret=$(sed -n 's/^stepper: return us=//p' $T/stepper.log | head -1)
	opened=$(sed -n 's/.*"event":"window-open".*"time_us":\([0-9]*\).*/\1/p' $T/ev | head -1)
	[ -n "$ret" ] && [ -n "$opened" ] || fail "expected the slow call's return and a window-open event; saw '$ret' and '$opened'"
	[ "$opened" -ge "$ret" ] || fail "expected the window opened after the slow call returned ($ret us); it opened at $opened us"
}

test_anomaly_rules_that_can_never_fire_are_refused() {
	local pid rule; pid=$(start_stepper pause)
	for rule in 'start=slow:stepper:dp_step>0ms,stop=+1s' 'start=gap:stepper:dp_step>1x,stop=+1s' \
		    'start=stall:stepper:dp_step>3x,stop=+1s' 'start=slow:stepper:dp_step>-1s,stop=+1s'; do
		dp --pid=$pid --output=$T/o "--window=$rule" < /dev/null
		expect_status 255 $?
		expect_line "^\[ERROR\] Argument --window: "
	done
	dp --pid=$pid --output=$T/o '--window=start=slow:stepper:dp_step>0ms,stop=+1s' < /dev/null
	expect_line "the limit '0ms' must be positive"
	dp --pid=$pid --output=$T/o '--window=start=gap:stepper:dp_step>1x,stop=+1s' < /dev/null
	expect_line "the multiple '1x' must be more than 1x"
	dp --pid=$pid --output=$T/o '--window=start=slow:stepper:no_such_step>1s,stop=+1s' < /dev/null
	expect_status 255 $?
	expect_line "^\[ERROR\] dynprof: pid $pid: slow:stepper:no_such_step>1s can never fire: no function no_such_step in "
	expect_no_line "start success|Start profiling"
	[ ! -e $T/o ] || fail "--output made for a refused run"
}
