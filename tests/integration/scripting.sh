# --commands=FILE and --control: start/stop/quit/sleep/wait from a script
# or from another program while dynprof runs.

CTL_CLIENT=$B/tests/peers/ctl_client

test_commands_file_start_sleep_stop_quit() {
	local pid; pid=$(start_target)
	printf '# a window of 300 ms\nstart\nsleep 300ms\n\nstop\nquit\n' > $T/cmds
	dp --pid=$pid --output=$T/o --commands=$T/cmds < /dev/null
	expect_status 0 $?
	expect_line "^dynamic profiling for pid $pid start success$"
	expect_line "^dynamic profiling for pid $pid stop success$"
	expect_line "^dynamic profiling for pid $pid quit success$"
	[ "$(prof_dirs_of $T/o $pid | wc -l)" = 1 ] || fail "expected one PROF_ folder"
}

test_commands_wait_for_calls() {
	local pid; pid=$(start_demo --step-ms=2)
	printf 'wait call:demo_task:demo_step#50\nstart\nwait call:demo_task:demo_step#120\nstop\n' > $T/cmds
	dp --pid=$pid --output=$T/o --commands=$T/cmds
	expect_status 0 $?
	expect_line "^\[INFO\] commands: wait call:demo_task:demo_step#50: met$"
	expect_line "^\[INFO\] commands: wait call:demo_task:demo_step#120: met$"
	# The start came after the 50th call, the stop after the 120th.
	[ "$(prof_dirs_of $T/o $pid | wc -l)" = 1 ] || fail "expected one PROF_ folder"
	[ "$(grep -n 'start success' $T/out | cut -d: -f1)" -gt "$(grep -n '#50: met' $T/out | cut -d: -f1)" ] ||
		fail "started before the wait was met"
}

test_commands_wait_file_and_exit() {
	local pid; pid=$(start_target)
	printf 'wait file:%s\nstart\nwait exit\n' $T/go > $T/cmds
	"$DP" --pid=$pid --output=$T/o --commands=$T/cmds > $T/out 2>&1 &
	local dpp=$!
	remember_pid $dpp
	sleep 0.3
	grep -q "start success" $T/out && fail "started before the file appeared"
	touch $T/go
	wait_until 5 grep -q "start success" $T/out || fail "no start after the file appeared"
	kill -TERM $pid
	wait $dpp
	expect_status 0 $? # the script ran to its end
	expect_line "commands: wait file:$T/go: met"
}

test_commands_bad_line_refused_before_connecting() {
	local pid; pid=$(start_target)
	printf 'start\nsleep forever\n' > $T/cmds
	dp --pid=$pid --output=$T/o --commands=$T/cmds
	expect_status 255 $?
	expect_line "^\[ERROR\] dynprof: $T/cmds:2: "
	expect_no_line "Start profiling"
	printf 'jump\n' > $T/cmds
	dp --pid=$pid --output=$T/o --commands=$T/cmds
	expect_status 255 $?
	expect_line "^\[ERROR\] dynprof: $T/cmds:1: 'jump': unknown command"
}

test_commands_missing_file() {
	dp --pid=1 --commands=$T/nope
	expect_status 255 $?
	expect_line "^\[ERROR\] Argument --commands: cannot read $T/nope: No such file or directory\.$"
}

test_commands_end_without_quit_quits() {
	local pid; pid=$(start_target)
	printf 'start\n' > $T/cmds
	dp --pid=$pid --output=$T/o --commands=$T/cmds
	expect_status 0 $?
	expect_line "^dynamic profiling for pid $pid quit success$"
	[ "$(prof_dirs_of $T/o $pid | wc -l)" = 1 ] || fail "the open window was not saved"
}

test_control_fifo_with_acks() {
	local pid; pid=$(start_target)
	"$DP" --pid=$pid --output=$T/o --control=fifo:$T/ctl,$T/ack < /dev/null > $T/out 2>&1 &
	local dpp=$!
	remember_pid $dpp
	wait_until 5 test -p $T/ack || fail "no ack FIFO: $(cat $T/out)"
	exec 8< $T/ack
	echo start > $T/ctl
	read -t 10 -u 8 line || fail "no ack for start"
	[ "$line" = "ack start" ] || fail "ack: $line"
	grep -q "start success" $T/out || fail "acknowledged before the start: $(cat $T/out)"
	echo "sleep nonsense" > $T/ctl
	read -t 10 -u 8 line || fail "no reply to a bad command"
	[[ "$line" == error:* ]] || fail "reply: $line"
	printf 'stop\nquit\n' > $T/ctl
	read -t 10 -u 8 line; [ "$line" = "ack stop" ] || fail "ack: $line"
	read -t 10 -u 8 line; [ "$line" = "ack quit" ] || fail "ack: $line"
	exec 8<&-
	wait $dpp
	expect_status 0 $?
	[ "$(prof_dirs_of $T/o $pid | wc -l)" = 1 ] || fail "expected one PROF_ folder"
	[ -e $T/ctl ] && fail "the control FIFO dynprof made was left behind"
	true
}

test_control_unix_socket_clients() {
	local pid; pid=$(start_demo --step-ms=2)
	"$DP" --pid=$pid --output=$T/o --control=unix:$T/ctl.sock < /dev/null > $T/out 2>&1 &
	local dpp=$!
	remember_pid $dpp
	wait_until 5 test -S $T/ctl.sock || fail "no control socket: $(cat $T/out)"
	[ "$(stat -c %a $T/ctl.sock)" = 600 ] || fail "socket mode $(stat -c %a $T/ctl.sock)"
	"$CTL_CLIENT" $T/ctl.sock start "sleep 200ms" stop > $T/c1 || fail "client failed: $(cat $T/c1)"
	[ "$(tr '\n' ' ' < $T/c1)" = "ack start ack sleep ack stop " ] || fail "replies: $(cat $T/c1)"
	"$CTL_CLIENT" $T/ctl.sock "wait signal:USR1" > $T/c2
	expect_line "^error: .*signal" $T/c2
	"$CTL_CLIENT" $T/ctl.sock quit > $T/c3
	wait $dpp
	expect_status 0 $?
	expect_line "^ack quit$" $T/c3
	[ -e $T/ctl.sock ] && fail "socket left behind"
	[ "$(prof_dirs_of $T/o $pid | wc -l)" = 1 ] || fail "expected one PROF_ folder"
}

test_control_bad_spec_refused() {
	touch $T/plain
	dp --pid=1 --control=fifo:$T/plain
	expect_status 255 $?
	expect_line "^\[ERROR\] Argument --control: .*$T/plain.*not a FIFO"
}

test_rules_with_commands_file_end_when_rules_done() {
	local pid; pid=$(start_target)
	printf 'sleep 100ms\n' > $T/cmds
	dp --pid=$pid --output=$T/o --commands=$T/cmds --window=start=+300ms,stop=+100ms
	expect_status 0 $?
	expect_line "every --window rule is done"
	[ "$(prof_dirs_of $T/o $pid | wc -l)" = 1 ] || fail "the rule's window did not run"
}
