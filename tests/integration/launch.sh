# Launch mode: the application is started by dynprof; every descendant that
# holds a card and serves a socket joins as a target, whatever wrappers
# stand between.

# app_script NAME <<EOF ... EOF: an executable script in $T.
app_script() { cat > $T/$1; chmod +x $T/$1; echo $T/$1; }

# A worker line for scripts: a card user serving the protocol via the agent.
worker() { # worker SECONDS [NODE]
	echo "env LD_PRELOAD=$AGENT_SO DYNPROF_AGENT_DEVICES='$T/dev/davinci*' $CARD_USER ${2:-$(make_card 0)} $1"
}

launch_bg() { # launch_bg [dynprof args] APP...: dynprof in the background, commands through dp_send
	mkfifo $T/in
	# $T/out before the FIFO: emptied before the caller goes on (see dp_background).
	"$DP" --dynamic=on --output=$T/o --device="$T/dev/davinci*" "$@" > $T/out 2>&1 < $T/in &
	DP_PID=$!
	remember_pid $DP_PID
	exec 7> $T/in
}
joined() { [ "$(grep -c '\] target joined:' $T/out)" -ge "$1" ]; }
lines_at_least() { [ "$(count_lines "$1")" -ge "$2" ]; } # lines_at_least REGEX N
# The application's card users end (they hold the test's cards only).
end_workers() { pkill -f -- "$CARD_USER $T/dev/" || true; }
# launch_window N: with N workers joined, one window (console start, stop) over them.
launch_window() {
	wait_until 30 joined $1 || fail "expected $1 targets: $(cat $T/out)"
	dp_send start
	wait_until 20 lines_at_least 'start success' $1 || fail "expected $1 starts: $(cat $T/out)"
	dp_send stop
	wait_until 20 lines_at_least 'stop success' $1 || fail "expected $1 stops: $(cat $T/out)"
}

test_wrapper_with_four_children_two_with_cards() {
	local app; app=$(app_script run.sh <<-EOS
	#!/bin/sh
	$(worker 60) &
	$(worker 60) &
	sleep 1 &
	sleep 1 &
	wait
	exit 3
	EOS
	)
	launch_bg $app
	launch_window 2
	exec 7>&- # the console's end: dynprof waits for the application, as msprof
	wait_until 10 grep -q "waiting for app process exit" $T/out || fail "not waiting: $(cat $T/out)"
	end_workers
	wait $DP_PID
	expect_status 3 $?
	[ "$(count_lines '^\[INFO\] target joined: pid [0-9]+ \(.*card_user.*\), cards 0$')" -eq 2 ] || fail "expected two targets"
	[ "$(count_lines 'start success')" -eq 2 ] || fail "expected two starts"
	[ "$(count_lines 'stop success')" -eq 2 ] || fail "expected two stops"
	expect_line "^\[INFO\] waiting for app process exit\.\.\.\.\.\.$"
	expect_line "^\[INFO\] summary: 2 targets joined, 2 windows opened, 2 PROF_ folders in $T/o; windows: 2 saved, 0 saved incomplete, 0 lost$"
}

test_nested_wrappers_and_exec_chains() {
	local app; app=$(app_script outer.sh <<-EOS
	#!/bin/sh
	exec env FOO=1 bash -c "sh -c \"$(worker 60)\""
	EOS
	)
	launch_bg $app
	launch_window 1
	end_workers
	wait $DP_PID
	expect_status 143 $? # the application is the worker itself (exec chain), ended by SIGTERM
	expect_line "target joined: pid [0-9]+ .*card_user"
	expect_line "stop success"
}

test_worker_started_after_start_is_started_on_joining() {
	local app; app=$(app_script late.sh <<-EOS
	#!/bin/sh
	$(worker 4) &
	sleep 1.5
	$(worker 3) &
	wait
	EOS
	)
	launch_bg $app
	wait_until 5 joined 1 || fail "first worker did not join"
	dp_send start
	wait_until 5 joined 2 || fail "late worker did not join"
	wait_until 3 eval '[ "$(count_lines "start success")" -eq 2 ]' || fail "late worker not started: $(cat $T/out)"
	dp_send stop
	wait_until 5 eval '[ "$(count_lines "stop success")" -eq 2 ]' || fail "not both stopped: $(cat $T/out)"
	dp_send quit
	wait $DP_PID
	expect_status 0 $?
}

test_worker_crash_mid_window_leaves_cleanly() {
	local app; app=$(app_script crash.sh <<-EOS
	#!/bin/sh
	$(worker 30) &
	$(worker 30) &
	wait
	EOS
	)
	launch_bg $app
	wait_until 5 joined 2 || fail "workers did not join"
	dp_send start
	wait_until 5 eval '[ "$(count_lines "start success")" -eq 2 ]' || fail "no windows"
	local victim; victim=$(grep -o 'target joined: pid [0-9]*' $T/out | head -n1 | grep -o '[0-9]*$')
	kill_hard $victim
	wait_until 5 grep -q "target left: pid $victim" $T/out || fail "crash not seen: $(cat $T/out)"
	dp_send stop
	wait_until 5 grep -q "stop success" $T/out || fail "survivor not stopped"
	expect_no_line "pid $victim stop"
	dp_send quit
	kill -TERM $(pgrep -f "$CARD_USER $T/") 2>/dev/null # its own workers: their card is under $T
	wait $DP_PID
}

test_application_exiting_during_window_ends_the_console() {
	local app; app=$(app_script short.sh <<-EOS
	#!/bin/sh
	exec $(worker 2)
	EOS
	)
	launch_bg $app
	wait_until 5 joined 1 || fail "worker did not join"
	dp_send start
	wait $DP_PID
	expect_status 0 $?
	expect_line "start success"
	expect_line "^\[INFO\] application exited with status 0$"
	# It was not waited for: saying so after it exited would be wrong.
	expect_no_line "waiting for app process exit"
	expect_line "summary: 1 target joined, 1 window opened"
}

# A launcher that detaches its workers (setsid -f) and exits at once: the
# run follows the workers until the last exits. The worker lives until the
# test ends it (after its window), not for a time a loaded machine may
# overrun before it joined.
detaching_launcher() {
	app_script detach.sh <<-EOS
	#!/bin/sh
	setsid -f sh -c "sleep 0.5; exec $(worker 600)"
	exit 5
	EOS
}

test_launcher_that_detaches_its_workers_is_followed_until_they_exit() {
	launch_bg $(detaching_launcher)
	wait_until 60 joined 1 || fail "expected the detached worker joined within 60 s: $(cat $T/out)"
	local w; w=$(sed -n 's/^\[INFO\] target joined: pid \([0-9]*\) .*/\1/p' $T/out | head -1)
	remember_pid $w
	dp_send start
	wait_until 30 grep -q "start success" $T/out || fail "expected its start success: $(cat $T/out)"
	dp_send stop
	wait_until 30 grep -q "stop success" $T/out || fail "expected its stop success: $(cat $T/out)"
	kill -TERM $w
	wait $DP_PID
	expect_status 5 $? # still the application's status
	expect_line "^\[INFO\] application exited with status 5$"
	expect_line "^\[INFO\] [0-9]+ process(es)? of its tree still runs? \(detached workers\): following (it|them) until"
	expect_line "^\[INFO\] the last process of the application's tree exited$"
	expect_line "summary: 1 target joined, 1 window opened"
}

test_follow_detached_off_ends_with_the_application() {
	launch_bg --follow-detached=off $(detaching_launcher)
	wait $DP_PID
	expect_status 5 $?
	expect_no_line "following|target joined"
	expect_line "summary: 0 targets joined"
}

test_launch_device_is_passed_to_the_agent() {
	# No DYNPROF_AGENT_DEVICES of its own: the agent takes --device's.
	local app; app=$(app_script nodevenv.sh <<-EOS
	#!/bin/sh
	exec env LD_PRELOAD=$AGENT_SO $CARD_USER $(make_card 0) 60
	EOS
	)
	launch_bg $app
	launch_window 1
	end_workers
	wait $DP_PID
	expect_line "start success"
	expect_no_line "has not been set up"
}

test_socket_serving_child_without_card_is_not_a_target() {
	local app; app=$(app_script nocard.sh <<-EOS
	#!/bin/sh
	LD_PRELOAD=$AGENT_SO $CARD_USER - 60 &
	echo \$! > $T/cardless.pid
	$(worker 60) &
	wait
	EOS
	)
	launch_bg $app
	launch_window 1
	# The card-less server listens all along, and is never taken.
	has_socket "$(cat $T/cardless.pid)" || fail "the card-less server does not listen"
	end_workers
	kill "$(cat $T/cardless.pid)"
	wait $DP_PID
	[ "$(count_lines '\] target joined:')" -eq 1 ] || fail "the card-less server joined: $(cat $T/out)"
}

test_application_that_never_opens_a_card_is_noticed() {
	launch_bg sleep 30
	wait_until 15 grep -q "no process of the application has opened a card yet" $T/out ||
		fail "no notice: $(cat $T/out)"
	dp_send quit
	kill -TERM $(pgrep -P $DP_PID) 2>/dev/null
	wait $DP_PID
	expect_line "summary: 0 targets joined"
}

# The demo behind a wrapper, as README's tour runs it, without --device: its
# card is in /tmp, which no default pattern takes; the notice names the node
# and the exact flag that would take it.
test_card_named_outside_the_patterns_is_named_with_the_flag_to_add() {
	printf '#!/bin/sh\nexec %s --quiet\n' "$DEMO" > $T/run.sh
	chmod +x $T/run.sh
	launch_bg $T/run.sh
	wait_until 20 grep -q "no process of the application has opened a card yet" $T/out ||
		fail "no notice: $(cat $T/out)"
	expect_line "no process of the application has opened a card yet: pid [0-9]+ holds /tmp/demo_task\.[A-Za-z0-9]+/davinci0, which no card pattern takes; to take it, add --device='/tmp/demo_task\.[A-Za-z0-9]+/\*'"
	dp_send quit
	kill -TERM $(pgrep -P $DP_PID) 2>/dev/null # launch mode waits for the application after quit
	wait $DP_PID
}

test_exit_status_and_signal_pass_through() {
	dp --dynamic=on --output=$T/o sh -c 'exit 7' < /dev/null
	expect_status 7 $?
	dp --dynamic=on --output=$T/o sh -c 'kill -KILL $$' < /dev/null
	expect_status 137 $?
	dp --dynamic=on --output=$T/o /nonexistent/app < /dev/null
	expect_status 127 $?
	expect_line "cannot run the application /nonexistent/app"
}

test_sigterm_stops_windows_then_reaches_the_application() {
	local app; app=$(app_script term.sh <<-EOS
	#!/bin/sh
	exec $(worker 60)
	EOS
	)
	launch_bg $app
	wait_until 5 joined 1 || fail "worker did not join"
	dp_send start
	wait_until 5 grep -q "start success" $T/out || fail "no window"
	kill -TERM $DP_PID
	wait $DP_PID
	expect_status 0 $? # card_user ends cleanly on SIGTERM: its status is dynprof's
	expect_line "stop success"
	expect_line "waiting for app process exit"
	[ -s "$(ls -d $T/o/PROF_*)/host/end_info" ] || fail "window left open"
}

test_application_option_and_msprof_key() {
	dp --dynamic=on --output=$T/o --application="sh -c env" < /dev/null
	expect_status 0 $?
	expect_line "^PROFILING_MODE=dynamic$"
	expect_no_line "^DYNAMIC_PROFILING_KEY_PID="
	DYNAMIC_PROFILING_KEY_PID=1 dp --dynamic=on --output=$T/o --msprof-key env < /dev/null
	expect_line "^DYNAMIC_PROFILING_KEY_PID=[0-9]+$"
	! grep -q "^DYNAMIC_PROFILING_KEY_PID=1$" $T/out || fail "key not dynprof's pid"
}

test_worker_that_re_execs_is_followed() {
	local card; card=$(make_card 0)
	# A worker serving its socket execs a new program after 2 s, which
	# serves a new one: the same pid leaves and joins again.
	local app; app=$(app_script reexec.sh <<-EOS
	#!/bin/sh
	exec $(worker 2) $CARD_USER $card 30
	EOS
	)
	launch_bg $app
	wait_until 5 joined 1 || fail "worker did not join"
	dp_send start
	wait_until 5 joined 2 || fail "re-exec'd worker did not join again: $(cat $T/out)"
	local pid; pid=$(grep -o 'target joined: pid [0-9]*' $T/out | head -n1 | grep -o '[0-9]*$')
	[ "$(grep -c "target joined: pid $pid " $T/out)" -eq 2 ] || fail "not the same pid: $(cat $T/out)"
	expect_line "target left: pid $pid"
	wait_until 5 eval '[ "$(count_lines "pid $pid start success")" -eq 2 ]' || fail "not restarted: $(cat $T/out)"
	dp_send stop quit
	kill -TERM $pid
	wait $DP_PID
}

test_application_reads_dev_null_unless_app_stdin() {
	echo hello | dp --dynamic=on --output=$T/o sh -c 'read x || echo got-eof'
	expect_line "^got-eof$"
	expect_line "invalid option -- 'hello'"
	echo hello | dp --dynamic=on --output=$T/o --app-stdin sh -c 'read x; echo got=$x'
	expect_status 0 $?
	expect_line "^got=hello$"
	expect_no_line "invalid option"
}

test_double_forked_daemon_of_the_application_joins() {
	local app; app=$(app_script daemon.sh <<-EOS
	#!/bin/sh
	setsid sh -c "sleep 0.3; $(worker 60) &" &
	while [ ! -e $T/done ]; do sleep 0.05; done
	EOS
	)
	launch_bg $app
	launch_window 1
	touch $T/done
	end_workers
	wait $DP_PID
	expect_status 0 $?
	expect_line "target joined: pid [0-9]+ .*card_user"
	expect_line "stop success"
}

test_signal_while_waiting_for_the_application_reaches_it() {
	launch_bg sleep 60
	dp_send quit
	wait_until 5 grep -q "waiting for app process exit" $T/out || fail "not waiting: $(cat $T/out)"
	kill -INT $DP_PID
	wait $DP_PID
	expect_status 130 $? # sleep died of the forwarded SIGINT
}

test_launch_quit_leaves_no_target_collecting() {
	# A worker still running when quit comes must not be joined again (and
	# started by the window the session had open) after it was let go.
	local card; card=$(make_card 0)
	dp_background --dynamic=on --output=$T/o --device="$T/dev/davinci*" sh -c \
		"exec env LD_PRELOAD=$AGENT_SO DYNPROF_AGENT_DEVICES='$T/dev/davinci*' $CARD_USER $card 3"
	dp_send start
	wait_until 10 grep -q "start success" $T/out || fail "no start: $(cat $T/out)"
	dp_send quit
	exec 7>&-
	wait $DP_PID
	expect_status 0 $?
	[ "$(count_lines "\] target joined: ")" = 1 ] || { cat $T/out; fail "joined again after quit"; }
	[ "$(ls -d $T/o/PROF_* | wc -l)" = 1 ] || fail "expected one PROF_ folder: $(ls $T/o)"
}

test_card_node_made_after_the_start_is_found() {
	# demo_task makes its own card node (in a fresh /tmp folder) after
	# dynprof started: the node is found by the periodic look for new nodes,
	# and the process that already opened it joins.
	cat > $T/app.sh <<-EOS
	#!/bin/sh
	exec $DEMO --quiet --steps=300 --step-ms=10
	EOS
	chmod +x $T/app.sh
	dp --dynamic=on --output=$T/o --device="/tmp/demo_task.*/davinci*" --app-stdin \
	   --window=start=+100ms,stop=+200ms $T/app.sh < /dev/null
	expect_status 0 $?
	expect_line "^\[INFO\] target joined: pid [0-9]+ \([^)]*demo_task[^)]*\), cards 0$"
	expect_line "stop success"
}

test_workers_beyond_the_first_table_join_and_slots_are_reused() {
	# dynprof-2targets: a session table starts with 2 slots. Three workers at
	# once make it grow; three more after they left take their slots again.
	local app; app=$(app_script waves.sh <<-EOS
	#!/bin/sh
	$(worker 3) &
	$(worker 3) &
	$(worker 3) &
	wait
	$(worker 3) &
	$(worker 3) &
	$(worker 3) &
	wait
	EOS
	)
	timeout -s KILL 90 "$B/tests/dynprof-2targets" --dynamic=on --output=$T/o \
		--device="$T/dev/davinci*" --events=json:$T/ev.json --app-stdin $app < /dev/null > $T/out 2>&1
	[ "$(count_lines '\] target joined:')" -eq 6 ] || { cat $T/out; fail "expected six targets"; }
	expect_no_line "cannot join"
	[ "$(grep -c '"event":"target-join"' $T/ev.json)" -eq 6 ] || { cat $T/ev.json; fail "six join events expected"; }
}

test_forked_worker_pool_is_explained_in_launch_mode() {
	# The agent serves the parent, not the children forked from it.
	cat > $T/pool.py <<-EOS
	import multiprocessing, os, time
	fd = os.open("$(make_card 0)", os.O_RDONLY)
	def work(n):
	    time.sleep(n)
	if __name__ == "__main__":
	    with multiprocessing.get_context("fork").Pool(2) as p:
	        p.map(work, [6, 6])
	EOS
	launch_bg env LD_PRELOAD=$AGENT_SO python3 $T/pool.py
	wait_until 15 eval '[ "$(grep -c "holds a card but serves no socket" $T/out)" -ge 2 ]' ||
		fail "no explanation: $(cat $T/out)"
	expect_line "^\[INFO\] pid [0-9]+ \([^ ]*python3 $T/pool.py\) holds a card but serves no socket, so it cannot be a target: a fork of pid [0-9]+ without exec"
	dp_send quit
	wait $DP_PID
}

# A worker started without the agent (no PROFILING_MODE=dynamic) serves no
# socket: with --host-sys it joins after the 3 s CANN would have taken,
# with dynprof's stand-in, and gets a host-only window.
test_a_socketless_worker_joins_with_the_stand_in_for_host_data() {
	local card; card=$(make_card 0)
	launch_bg --host-sys=cpu,mem --window=start=open,stop=+300ms $CARD_USER $card 20
	wait_until 15 joined 1 || fail "not joined: $(cat $T/out)"
	expect_line "^\[INFO\] pid [0-9]+ serves no dynamic profiling socket \(not started with PROFILING_MODE=dynamic\): its windows hold the host data dynprof collects itself \(cpu,mem\), no device data\$"
	expect_no_line "so it cannot be a target"
	local pid; pid=$(sed -nE 's/^\[INFO\] pid ([0-9]+) serves no dynamic profiling socket.*/\1/p' $T/out)
	# A window of 300 ms by rule: the cpu lane needs two 20 ms samples.
	wait_until 10 grep -q "window saved" $T/out || fail "not saved: $(cat $T/out)"
	dp_send quit
	wait $DP_PID
	local d; d=$(prof_dirs_of $T/o $pid)
	[ -s "$d/host/data/host_cpu.data.slice_0" ] && [ -s "$d/host/end_info" ] ||
		fail "no host-only window of $pid: $(ls -R $T/o)"
}

test_msprof_key_rank_that_lost_the_shared_socket_is_told() {
	# Two ranks, one socket path: the second to bind takes it from the first.
	local app; app=$(app_script ranks.sh <<-EOS
	#!/bin/sh
	$(worker 8) &
	sleep 1
	$(worker 8) &
	wait
	EOS
	)
	launch_bg --msprof-key $app
	wait_until 15 grep -q "holds a card but serves no socket" $T/out || fail "not told: $(cat $T/out)"
	expect_line "^\[INFO\] pid [0-9]+ \(.*card_user.*\) holds a card but serves no socket, so it cannot be a target: with --msprof-key every process of the application serves the one socket path dynamic_profiling_socket_$DP_PID "
	[ "$(count_lines 'holds a card but serves no socket')" -eq 1 ] || fail "told more than once or of both: $(cat $T/out)"
	dp_send quit
	wait $DP_PID
}
