# --commands=FILE and --control: start/stop/quit/sleep/wait from a script
# or from another program while dynprof runs.

CTL_CLIENT=$B/tests/peers/ctl_client
CALLER=$B/tests/peers/caller

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

# start_caller_target NAME ACTION...: tests/peers/caller serving the protocol
# (preloaded agent) with card 0 open, making exactly the calls it is told
# to (log $T/NAME.log); echoes its pid once its socket listens.
start_caller_target() {
	local name=$1 card; shift
	card=$(make_card 0)
	env PROFILING_MODE=dynamic LD_PRELOAD="$AGENT_SO" DYNPROF_AGENT_DEVICES="$T/dev/davinci*" \
		"$CALLER" open=$card "$@" > $T/$name.log 2>&1 < /dev/null &
	local pid=$!
	remember_pid $pid
	wait_until 5 has_socket $pid || fail "caller $name never opened its socket"
	# And holds its card (the open comes after the agent's socket): a caller
	# that could not open it ends, and was once found gone by dynprof.
	wait_until 5 grep -q "^caller: open=.* done" $T/$name.log ||
		fail "caller $name did not open its card: $(cat $T/$name.log)"
	echo $pid
}
# go PID NAME ACTION: let caller PID past its next wait; returns once ACTION is done.
go() {
	kill -USR1 $1
	wait_until 10 grep -q "^caller: $3 done" $T/$2.log || { cat $T/$2.log; fail "caller $2 never did $3"; }
}
# A script whose first line is `wait +10ms`: once it is met, the targets
# have joined and their probes are attached (triggers run before scripts).
dp_script() { # dp_script CMDS dynprof-args...: sets DPP
	local cmds=$1; shift
	printf 'wait +10ms\n%b' "$cmds" > $T/cmds
	"$DP" "$@" --output=$T/o --commands=$T/cmds < /dev/null > $T/out 2>&1 &
	DPP=$!
	remember_pid $DPP
	wait_until 5 grep -q "wait +10ms: met" $T/out || fail "the script did not begin: $(cat $T/out)"
}
# Something that did not happen 0.5 s after the step meant to cause it
# (the broken behaviour would take milliseconds).
expect_not_yet() { sleep 0.5; expect_no_line "$1"; }

test_commands_wait_for_calls() {
	# The caller stops between batches, so the count at any moment is known.
	local pid; pid=$(start_caller_target c wait call=45 wait call=10 wait call=4 wait call=2 pause)
	dp_script 'wait call:caller:dp_caller_hit#50\nstart\nwait call:caller:dp_caller_hit#60\nstop\n' --pid=$pid
	go $pid c call=45
	expect_not_yet "start success" # 45 calls: short of 50
	go $pid c call=10
	wait_until 5 grep -q "start success" $T/out || fail "no start after the 50th call: $(cat $T/out)"
	# The stop's wait counts from the join as well, not from the start.
	go $pid c call=4
	expect_not_yet "stop success" # 59 calls
	go $pid c call=2
	wait $DPP
	expect_status 0 $?
	expect_line "^\[INFO\] commands: wait call:caller:dp_caller_hit#50: met$"
	expect_line "^\[INFO\] commands: wait call:caller:dp_caller_hit#60: met$"
	expect_line "^dynamic profiling for pid $pid stop success$"
	[ "$(prof_dirs_of $T/o $pid | wc -l)" = 1 ] || fail "expected one PROF_ folder"
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
	# `wait exit` holds the script, and so the run, while the target lives.
	sleep 0.5
	kill -0 $dpp 2>/dev/null || fail "dynprof ended with its target alive: $(cat $T/out)"
	expect_no_line "wait exit: met|quit success"
	kill -TERM $pid
	wait $dpp
	expect_status 0 $? # the script ran to its end
	expect_line "commands: wait file:$T/go: met"
	expect_line "commands: wait exit: met"
	expect_no_line "quit success" # the target left: nothing to quit
}

test_commands_wait_counts_per_target_and_exit_waits_for_all() {
	# `call:` is met by one target's own count (30 + 30 calls do not make
	# 50), and `wait exit` by the last target leaving, not the first.
	local a b; a=$(start_caller_target a wait call=30 wait call=25 pause)
	b=$(start_caller_target b wait call=30 pause)
	dp_script 'wait call:caller:dp_caller_hit#50\nstart\nwait exit\n' --pid=$a,$b
	go $a a call=30
	go $b b call=30
	expect_not_yet "start success"
	go $a a call=25
	wait_until 5 eval '[ "$(count_lines "start success")" = 2 ]' || fail "expected START in both targets: $(cat $T/out)"
	kill -TERM $b
	wait_until 5 all_gone $b || fail "target $b did not exit"
	sleep 0.5 # dynprof sees an exit within milliseconds
	kill -0 $DPP 2>/dev/null || fail "dynprof ended with target $a alive: $(cat $T/out)"
	expect_no_line "wait exit: met"
	kill -TERM $a
	wait $DPP
	expect_status 0 $?
	expect_line "^\[INFO\] commands: wait exit: met$"
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
	[ "$line" = "ack start: pid $pid success" ] || fail "ack: $line"
	grep -q "start success" $T/out || fail "acknowledged before the start: $(cat $T/out)"
	echo "sleep nonsense" > $T/ctl
	read -t 10 -u 8 line || fail "no reply to a bad command"
	[[ "$line" == error:* ]] || fail "reply: $line"
	printf 'stop\nquit\n' > $T/ctl
	read -t 10 -u 8 line; [[ "$line" == "ack stop: pid $pid success, window saved $T/o/PROF_"* ]] || fail "ack: $line"
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
	wait_until 5 listening $T/ctl.sock || fail "no control socket: $(cat $T/out)"
	[ "$(stat -c %a $T/ctl.sock)" = 600 ] || fail "socket mode $(stat -c %a $T/ctl.sock)"
	"$CTL_CLIENT" $T/ctl.sock start "sleep 200ms" stop > $T/c1 || fail "client failed: $(cat $T/c1)"
	[ "$(sed -E 's/^(ack [a-z]+): .*/\1/' $T/c1 | tr '\n' ' ')" = "ack start ack sleep ack stop " ] || fail "replies: $(cat $T/c1)"
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
