# Control while it runs: `events` (a --control client streaming the
# --events=json objects) and `window RULE` (a rule added at run time), with
# real targets, real sockets and real uprobes.

# acks FILE: the reply lines' verbs, what each target answered left out
# ("ack start: pid 1 success" reads "ack start").
acks() { sed -E 's/^(ack [a-z]+)(: | \{).*/\1/' "$1" | tr '\n' ' '; }

CTL=$B/tests/peers/ctl_client
STREAM=$B/tests/peers/stream_client
CALLER=$B/tests/peers/caller

# dp_control ARGS...: dynprof in the background with --control=unix:$T/ctl.sock
# (standard input: the FIFO $T/in, written through fd 7); sets DP_PID.
dp_control() {
	mkfifo $T/in
	# $T/out before the FIFO: emptied before the caller goes on (see dp_background).
	"$DP" --control=unix:$T/ctl.sock "$@" > $T/out 2>&1 < $T/in &
	DP_PID=$!
	remember_pid $DP_PID
	exec 7> $T/in
	wait_until 10 listening $T/ctl.sock || fail "no control socket: $(cat $T/out)"
}

# stream_to FILE: an `events` client writing what it reads to FILE, once acknowledged.
stream_to() {
	"$STREAM" $T/ctl.sock > $1 2>&1 &
	STREAM_PID=$!
	remember_pid $STREAM_PID
	wait_until 10 grep -q '^ack events$' $1 || fail "no ack events: $(cat $1)"
}

# ctl CMD...: ctl_client's replies, one per command, into $T/c.
# (A failure says how the client ended, 1 closed, 2 no reply in 30 s, and
# what dynprof said: a close after "ack start" was seen once, unexplained.)
ctl() {
	local rc=0
	"$CTL" $T/ctl.sock "$@" > $T/c 2>&1 || rc=$?
	[ $rc = 0 ] || fail "ctl_client $* (status $rc, dynprof $(kill -0 $DP_PID 2>/dev/null && echo alive || echo gone)): $(cat $T/c); dynprof said: $(tail -n 20 $T/out)"
}

# The end of a run: SIGTERM (launch mode: the application gets it too), every window stopped first.
end_run() {
	kill -TERM $DP_PID
	wait $DP_PID
}

# launch_app NAME: an application whose first worker (card 0) starts at once
# and, with LATE=1, a second (card 1) once $T/go exists; both serve the protocol.
launch_app() {
	local c0 c1; c0=$(make_card 0); c1=$(make_card 1)
	local worker="env PROFILING_MODE=dynamic LD_PRELOAD=$AGENT_SO DYNPROF_AGENT_DEVICES='$T/dev/davinci*' $CARD_USER"
	cat > $T/$1 <<-EOS
	#!/bin/sh
	[ -n "\${FIRST_LATE:-}" ] || $worker $c0 60 &
	while [ ! -e $T/go ]; do sleep 0.05; done
	[ -n "\${FIRST_LATE:-}" ] && $worker $c0 60 &
	[ -n "\${LATE:-}" ] && $worker $c1 60 &
	wait
	EOS
	chmod +x $T/$1
	echo $T/$1
}

joined_pids() { sed -nE 's/^\[INFO\] target joined: pid ([0-9]+) .*/\1/p' $T/out; }
has_joined() { [ "$(joined_pids | wc -l)" -ge "$1" ]; }

test_live_events_client_sees_join_and_the_window_another_client_opens() {
	local app; app=$(launch_app app.sh)
	FIRST_LATE=1 dp_control --dynamic=on --output=$T/o --device="$T/dev/davinci*" --app-stdin $app
	stream_to $T/a
	touch $T/go
	wait_until 15 grep -q '"event":"target-join"' $T/a || fail "no target-join streamed: $(cat $T/a; cat $T/out)"
	local w; w=$(sed -nE 's/.*"event":"target-join","time_us":[0-9]+,"pid":([0-9]+).*/\1/p' $T/a)
	[ -n "$w" ] || fail "target-join without a pid: $(cat $T/a)"
	ctl start "sleep 300ms" stop
	[ "$(acks $T/c)" = "ack start ack sleep ack stop " ] || fail "replies: $(cat $T/c)"
	wait_until 10 grep -q '"event":"window-close"' $T/a || fail "no window-close streamed: $(cat $T/a)"
	grep -Eq "^\{\"event\":\"window-open\",\"time_us\":[0-9]+,\"pid\":$w\}$" $T/a || fail "no window-open: $(cat $T/a)"
	grep -Eq "^\{\"event\":\"window-close\",\"time_us\":[0-9]+,\"pid\":$w,\"prof\":\[\"$T/o/PROF_[^\"]+\"\],\"fate\":\"saved\"\}$" $T/a ||
		fail "window-close without its PROF_ folder: $(cat $T/a)"
	local prof; prof=$(sed -nE 's/.*"window-close".*"prof":\["([^"]+)"\].*/\1/p' $T/a)
	[ -d "$prof/host" ] || fail "the streamed folder is not there: $prof"
	# No --events: the console has no JSON of its own.
	expect_no_line '"event"'
	end_run
	expect_status 143 $?
}

test_live_two_streaming_clients_get_the_same_lines() {
	local pid; pid=$(start_target)
	dp_control --pid=$pid --output=$T/o
	stream_to $T/a
	local sa=$STREAM_PID
	stream_to $T/b
	local sb=$STREAM_PID
	ctl start stop
	wait_until 10 grep -q '"event":"window-close"' $T/a || fail "a: no window-close: $(cat $T/a)"
	wait_until 10 grep -q '"event":"window-close"' $T/b || fail "b: no window-close: $(cat $T/b)"
	ctl quit
	wait $DP_PID
	expect_status 0 $?
	# Both read to the end (dynprof closed them) and wrote all they read: the
	# same lines, quit included. (Their last line could land after dynprof's end.)
	# Seen once under two suites with ASan: the line in the file just after
	# the client read as gone. Wait for the lines themselves.
	wait_until 10 grep -q '"event":"target-leave".*"reason":"quit"' $T/a || fail "a: no target-leave: $(cat $T/a)"
	wait_until 10 grep -q '"event":"target-leave".*"reason":"quit"' $T/b || fail "b: no target-leave: $(cat $T/b)"
	wait_until 10 all_gone $sa $sb || fail "the streaming clients did not end with dynprof"
	cmp -s $T/a $T/b || { diff $T/a $T/b; fail "the two clients got different lines"; }
	[ "$(grep -c '"event"' $T/a)" = 3 ] || fail "expected window-open, window-close, target-leave: $(cat $T/a)"
}

test_live_slow_reader_delays_no_one_and_is_told_what_it_lost() {
	local pid; pid=$(start_target)
	dp_control --pid=$pid --output=$T/o
	# Never reads until $T/read exists: its socket and then its queue fill.
	"$STREAM" $T/ctl.sock $T/read > $T/slow 2>&1 &
	remember_pid $!
	sleep 0.5
	ctl "sleep 1ms" # its `events` was read before this
	# Many events: each refused console line is an [ERROR] line and an error event (~200 bytes).
	for i in $(seq 20000); do echo "window nonsense$i"; done >&7
	wait_until 60 grep -q "nonsense20000" $T/out || fail "the console lines were not all read"
	local t0=$SECONDS
	ctl start stop
	[ "$(acks $T/c)" = "ack start ack stop " ] || fail "replies: $(cat $T/c)"
	[ $((SECONDS - t0)) -le 10 ] || fail "start and stop took $((SECONDS - t0)) s with a reader stalled"
	touch $T/read
	wait_until 20 grep -q '"event":"dropped"' $T/slow || fail "no dropped event: $(tail -3 $T/slow)"
	local n; n=$(sed -nE 's/^\{"event":"dropped","time_us":[0-9]+,"count":([0-9]+)\}$/\1/p' $T/slow | head -1)
	[ -n "$n" ] && [ "$n" -gt 0 ] || fail "dropped line: $(grep dropped $T/slow)"
	# What it did get: whole lines, the ack first, and what came after the gap.
	[ "$(head -1 $T/slow)" = "ack events" ] || fail "first line: $(head -1 $T/slow)"
	# Streaming again after the gap: a window now is seen.
	ctl start stop
	wait_until 10 grep -q '"event":"window-close"' $T/slow || fail "nothing after the gap: $(tail -3 $T/slow)"
	[ "$(grep -o '"event":"[a-z-]*"' $T/slow | tail -2 | tr '\n' ' ')" = '"event":"window-open" "event":"window-close" ' ] ||
		fail "the window after the gap: $(tail -3 $T/slow)"
	[ "$(grep -vc '^{"event":"[a-z-]*","time_us":[0-9]*,.*}$' $T/slow)" = 1 ] ||
		fail "lines cut or garbled: $(grep -v '^{"event":"[a-z-]*","time_us":[0-9]*,.*}$' $T/slow | head -3)"
	local got; got=$(grep -c '"event":"error"' $T/slow)
	[ $((got + n)) -ge 20000 ] || fail "got $got error events and $n dropped, of 20000"
	ctl quit
	wait $DP_PID
	expect_status 0 $?
}

test_live_window_added_runs_in_a_present_target_and_a_later_joiner() {
	local app; app=$(launch_app app.sh)
	LATE=1 dp_control --dynamic=on --output=$T/o --device="$T/dev/davinci*" --app-stdin $app
	wait_until 15 has_joined 1 || fail "the first worker never joined: $(cat $T/out)"
	local w1; w1=$(joined_pids | head -1)
	local sent_us=$(( $(date +%s%N) / 1000 ))
	ctl "window start=+1s,stop=+1s"
	[ "$(cat $T/c)" = "ack window 1" ] || fail "reply: $(cat $T/c)"
	expect_line "^\[INFO\] rule 1 added: start=\+1s,stop=\+1s$"
	wait_until 15 grep -q "rule 1: stop=+1s fired for pid $w1$" $T/out || fail "no window in $w1: $(cat $T/out)"
	touch $T/go
	wait_until 15 has_joined 2 || fail "the second worker never joined: $(cat $T/out)"
	local w2; w2=$(joined_pids | sed -n 2p)
	wait_until 15 grep -q "rule 1: stop=+1s fired for pid $w2$" $T/out || fail "no window in the joiner $w2: $(cat $T/out)"
	expect_line "^\[INFO\] rule 1: start=\+1s fired for pid $w2$"
	end_run
	expect_status 143 $?
	[ "$(prof_dirs_of $T/o $w1 | wc -l)" = 1 ] || fail "$w1: $(ls $T/o)"
	[ "$(prof_dirs_of $T/o $w2 | wc -l)" = 1 ] || fail "$w2: $(ls $T/o)"
	grep -q "\"pid\":$w2,\"rule\":1,\"window\":1" $T/o/*_dynprof_windows || fail "no record: $(cat $T/o/*_dynprof_windows)"
	# +1s counts from when the rule was added (a lower bound: no load can make it fail).
	local fired; fired=$(grep "\"pid\":$w1,\"rule\":1" $T/o/*_dynprof_windows | sed -nE 's/.*"start":\{[^}]*"fired_us":([0-9]+).*/\1/p')
	[ -n "$fired" ] && [ $((fired - sent_us)) -ge 1000000 ] || fail "start=+1s fired $((fired - sent_us)) us after the rule was sent"
}

test_live_window_bad_rule_refused_with_the_parsers_message() {
	local pid; pid=$(start_target) bad='start=+1s,repeat=3'
	dp --pid=$pid --window="$bad"
	expect_status 255 $?
	local msg; msg=$(sed -n 's/^\[ERROR\] Argument --window: //p' $T/out)
	[ -n "$msg" ] || fail "no parser message: $(cat $T/out)"
	dp_control --pid=$pid --output=$T/o
	ctl "window $bad" "window" "window start=open,stop=+1s" "window start=+1s"
	[ "$(sed -n 1p $T/c)" = "error: $msg" ] || fail "reply: $(sed -n 1p $T/c), expected error: $msg"
	[[ "$(sed -n 2p $T/c)" == "error: 'window': window needs a rule"* ]] || fail "reply: $(sed -n 2p $T/c)"
	[[ "$(sed -n 3p $T/c)" == "error: start=open: card opens are not watched in this run"* ]] ||
		fail "reply: $(sed -n 3p $T/c)"
	[ "$(sed -n 4p $T/c)" = "ack window 1" ] || fail "a refused rule took a number: $(sed -n 4p $T/c)"
	ctl quit
	wait $DP_PID
	expect_status 0 $?
}

test_live_window_call_counts_from_now() {
	local card; card=$(make_card 0)
	env PROFILING_MODE=dynamic LD_PRELOAD="$AGENT_SO" DYNPROF_AGENT_DEVICES="$T/dev/davinci*" \
		"$CALLER" open=$card wait call=30 wait call=10 pause > $T/caller.log 2>&1 < /dev/null &
	local pid=$!
	remember_pid $pid
	wait_until 5 has_socket $pid || fail "caller never opened its socket"
	dp_control --pid=$pid --output=$T/o
	# No call: rule at the start: the kernel side loads with this one, which never fires (40 calls).
	ctl "window start=call:caller:dp_caller_hit#1000,stop=+100ms"
	[ "$(cat $T/c)" = "ack window 1" ] || fail "reply: $(cat $T/c)"
	kill -USR1 $pid
	wait_until 5 grep -q "call=30 done" $T/caller.log || fail "caller: $(cat $T/caller.log)"
	# 30 calls counted: #5 counts from now, so it waits for 5 more.
	ctl "window start=call:caller:dp_caller_hit#5,stop=+100ms"
	[ "$(cat $T/c)" = "ack window 2" ] || fail "reply: $(cat $T/c)"
	sleep 0.5
	expect_no_line "rule 2: start="
	kill -USR1 $pid
	wait_until 10 grep -q "rule 2: start=call:caller:dp_caller_hit#5 fired for pid $pid (call 35)$" $T/out ||
		fail "rule 2 did not fire at call 35: $(cat $T/out)"
	wait_until 10 grep -q "rule 2: stop=+100ms fired" $T/out || fail "no stop: $(cat $T/out)"
	ctl quit
	wait $DP_PID
	expect_status 0 $?
	expect_no_line "rule 1: start="
}

test_live_events_needs_a_unix_socket() {
	local pid; pid=$(start_target)
	"$DP" --pid=$pid --output=$T/o --control=fifo:$T/ctl,$T/ack < /dev/null > $T/out 2>&1 &
	DP_PID=$!
	remember_pid $DP_PID
	wait_until 5 test -p $T/ack || fail "no ack FIFO: $(cat $T/out)"
	exec 8< $T/ack
	echo events > $T/ctl
	read -t 10 -u 8 line || fail "no reply to events"
	[ "$line" = "error: events needs a unix control socket" ] || fail "reply: $line"
	echo quit > $T/ctl
	read -t 10 -u 8 line; [ "$line" = "ack quit" ] || fail "reply: $line"
	wait $DP_PID
	expect_status 0 $?
	printf 'start\nevents\n' > $T/cmds
	dp --pid=$pid --output=$T/o --commands=$T/cmds
	expect_status 255 $?
	expect_line "^\[ERROR\] dynprof: $T/cmds:2: events needs a unix control socket"
}

test_live_window_in_a_commands_file_and_the_console() {
	local pid; pid=$(start_target)
	printf 'window start=+300ms,stop=+300ms\nsleep 2s\n' > $T/cmds
	dp --pid=$pid --output=$T/o --commands=$T/cmds < /dev/null
	expect_status 0 $?
	expect_line "^\[INFO\] rule 1: stop=\+300ms fired for pid $pid$"
	[ "$(prof_dirs_of $T/o $pid | wc -l)" = 1 ] || fail "commands: $(ls $T/o)"
	{ echo "window start=+300ms,stop=+300ms"; echo "window start=+1x"; sleep 2; echo quit; } |
		dp --pid=$pid --output=$T/o2
	expect_status 0 $?
	expect_line "^\[INFO\] rule 1: stop=\+300ms fired for pid $pid$"
	expect_line "^\[ERROR\] dynprof: window: \+1x: '1x' is not a duration"
	[ "$(prof_dirs_of $T/o2 $pid | wc -l)" = 1 ] || fail "console: $(ls $T/o2)"
}

test_live_window_call_refused_without_bpf_uprobes() {
	local card; card=$(make_card 0)
	# In a pid namespace of its own dynprof cannot use BPF uprobes (not the
	# initial pid namespace); it and its target run there.
	# A /root of its own there: the target's socket is named by its pid in
	# the namespace (2 or so), which the same test of another run has too.
	cat > $T/inside.sh <<-EOS
	#!/bin/bash
	mount -t tmpfs tmpfs $ROOT_HOME || exit 1
	env PROFILING_MODE=dynamic LD_PRELOAD=$AGENT_SO DYNPROF_AGENT_DEVICES='$T/dev/davinci*' $CARD_USER $card 60 > $T/target.log 2>&1 &
	t=\$!
	echo \$t > $T/nspid
	for i in \$(seq 250); do [ -S $ROOT_HOME/dynamic_profiling_socket_\$t ] && break; sleep 0.02; done
	exec $DP --pid=\$t --output=$T/o --control=unix:$T/ctl.sock
	EOS
	unshare --pid --fork --kill-child --mount-proc bash $T/inside.sh < /dev/null > $T/out 2>&1 &
	DP_PID=$!
	remember_pid $DP_PID
	wait_until 10 test -s $T/nspid || fail "nothing ran in the namespace: $(cat $T/out)"
	wait_until 10 listening $T/ctl.sock || fail "no control socket: $(cat $T/out)"
	ctl "window start=call:card_user:main#1,stop=+1s" "window start=+200ms,stop=+200ms"
	[ "$(sed -n 1p $T/c)" = "error: call:, slow:, gap: and stall: conditions need BPF uprobes: not in the initial pid namespace" ] ||
		fail "reply: $(sed -n 1p $T/c)"
	[ "$(sed -n 2p $T/c)" = "ack window 1" ] || fail "the refused rule took a number: $(sed -n 2p $T/c)"
	wait_until 10 grep -q "rule 1: stop=+200ms fired" $T/out || fail "rule 1 did not run: $(cat $T/out)"
	ctl quit
	wait $DP_PID
	expect_status 0 $?
}

# A signal rule added while dynprof runs, its signal sent once dynprof's
# loop blocks it: the signal opens the window, whatever threads dynprof
# had made before (each blocks every signal from its start). Before, a
# thread made earlier (here the one that closes the pthread probes after a
# --host-sys=osrt window) took the USR1 with its default action: dynprof
# ended.
test_live_signal_rule_reaches_the_loop_past_dynprofs_older_threads() {
	local pid; pid=$(start_target)
	dp_control --pid=$pid --output=$T/o --host-sys=osrt
	dp_send start
	wait_until 10 grep -q "start success" $T/out || fail "no window: $(cat $T/out)"
	dp_send stop
	wait_until 10 grep -q "window saved in" $T/out || fail "no saved window: $(cat $T/out)"
	wait_until 10 eval '[ $(ls /proc/$DP_PID/task | wc -l) -gt 1 ]' ||
		fail "dynprof made no thread to test with: $(ls /proc/$DP_PID/task)"
	dp_send "window start=signal:USR1,stop=+100ms"
	wait_until 10 grep -q "rule 1 added" $T/out || fail "rule not added: $(cat $T/out)"
	wait_until 10 signal_blocked $DP_PID USR1 || fail "USR1 never blocked by dynprof's loop"
	kill -USR1 $DP_PID
	wait_until 10 grep -q "rule 1: stop=+100ms fired for pid $pid$" $T/out ||
		fail "no rule window (dynprof alive: $(kill -0 $DP_PID 2>/dev/null && echo yes || echo no)): $(cat $T/out)"
	dp_send quit
	wait $DP_PID
	expect_status 0 $?
}
