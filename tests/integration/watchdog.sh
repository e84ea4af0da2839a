# SIGKILL of dynprof leaves no window open: its watchdog process stops
# and quits every open window in the target's generation (9.x file, 8.5.0
# abstract, v1), then exits; a normal end leaves it nothing to do. And the
# agent ends a window whose client vanished (8.5.0) after a grace period.

# start_logged NAME [VAR=value...]: a card user serving through the
# preloaded agent with its log in $T/NAME.log. Echoes its pid once it listens.
start_logged() {
	local name=$1 card; shift
	card=$(make_card 0)
	env PROFILING_MODE=dynamic LD_PRELOAD="$AGENT_SO" DYNPROF_AGENT_DEVICES="$T/dev/davinci*" \
		DYNPROF_AGENT_LOG=1 "$@" "$CARD_USER" "$card" 600 > $T/$name.log 2>&1 &
	local pid=$!
	remember_pid $pid
	wait_until 5 grep -q "listening on" $T/$name.log || fail "target $name never listened: $(cat $T/$name.log)"
	echo $pid
}

# The three kinds of server, with their logs in $T/file.log, abstract.log, v1.log.
start_three() {
	F=$(start_logged file)
	A=$(start_logged abstract DYNPROF_AGENT_FLAVOUR=abstract)
	V=$(start_logged v1 DYNPROF_AGENT_PROTOCOL=v1)
}

windows_open() { lines_are 'start success' "$1"; }
lines_are() { [ "$(count_lines "$1")" -eq "$2" ]; } # lines_are REGEX N

watchdog_of() { ps -o pid=,comm= --ppid "$1" | awk '$2 == "dynprof-wd" { print $1 }'; }
has_watchdog() { [ -n "$(watchdog_of "$1")" ]; }

# The agent's own lines of what a client asked, in order: "stop -> 0", "quit".
asked() { sed -n 's/^dynprof-agent\[[0-9]*\]: \(stop -> [0-9]*\|quit\|start -> [0-9]*\)\( .*\)\{0,1\}$/\1/p' $T/$1.log | tr '\n' ','; }

window_path() { sed -n 's/^dynprof-agent\[[0-9]*\]: window open: //p' $T/$1.log | tail -1; }

# NAME's window was stopped by a STOP (not by the client's death), then QUIT came, and its folder is complete.
expect_stopped_then_quit() { # expect_stopped_then_quit NAME
	local path
	wait_until 15 grep -q ': quit$' $T/$1.log || fail "$1 got no QUIT: $(cat $T/$1.log)"
	case "$(asked $1)" in
	*"start -> 0,stop -> 0,quit,") ;;
	*) fail "$1: expected START, STOP, QUIT; the agent saw: $(asked $1)" ;;
	esac
	! grep -q "command read failed mid-window" $T/$1.log || fail "$1: window ended by the client's death, not by a STOP"
	path=$(window_path $1)
	[ -s "$path/host/end_info" ] || fail "$1: no end_info in $path"
}

kill_mid_window() { # kill_mid_window N: dynprof is running in the background with N windows
	wait_until 10 windows_open $1 || fail "windows did not open: $(cat $T/out)"
	WD=$(watchdog_of $DP_PID)
	[ -n "$WD" ] || fail "no watchdog child of dynprof $DP_PID: $(ps -o pid,comm --ppid $DP_PID)"
	kill -KILL $DP_PID
	wait $DP_PID 2>/dev/null
}

test_sigkill_of_dynprof_stops_and_quits_every_open_window() {
	start_three
	dp_background --pid=$F,$A,$V --output=$T/o
	dp_send start
	kill_mid_window 3
	for n in file abstract v1; do expect_stopped_then_quit $n; done
	wait_until 15 all_gone $WD || fail "the watchdog $WD did not exit"
	for p in $F $A $V; do
		wait_until 5 grep -q "dynprof watchdog: dynprof (pid $DP_PID) ended with a window open in pid $p: sent STOP (answered) and QUIT" $T/out ||
			expect_line "dynprof watchdog: .* in pid $p: sent STOP \(answered\) and QUIT"
	done
}

test_sigkill_quits_targets_without_a_window_and_they_serve_again() {
	local a b; a=$(start_logged file); b=$(start_logged v1 DYNPROF_AGENT_PROTOCOL=v1)
	dp_background --pid=$a,$b --output=$T/o
	dp_send start stop
	wait_until 10 lines_are 'stop success' 2 ||
		fail "no stops: $(cat $T/out)"
	WD=$(watchdog_of $DP_PID)
	[ -n "$WD" ] || fail "no watchdog"
	kill -KILL $DP_PID
	wait $DP_PID 2>/dev/null
	for n in file v1; do
		wait_until 10 grep -q ': quit$' $T/$n.log || fail "$n got no QUIT: $(cat $T/$n.log)"
		[ "$(grep -c 'stop -> ' $T/$n.log)" -eq 1 ] || fail "$n: a STOP without a window: $(asked $n)"
	done
	expect_no_line "dynprof watchdog"
	wait_until 10 all_gone $WD || fail "the watchdog did not exit"
	# Both were left cleanly: the v1 server serves the next client (a spin would not).
	printf 'start\nstop\nquit\n' | dp --pid=$a,$b --output=$T/o2
	expect_status 0 $?
	[ "$(count_lines 'stop success')" -eq 2 ] || fail "a later dynprof could not use them: $(cat $T/out)"
}

test_sigkill_in_launch_mode_stops_the_open_windows() {
	local card; card=$(make_card 0)
	cat > $T/app.sh <<-EOS
	#!/bin/sh
	export DYNPROF_AGENT_LOG=1 LD_PRELOAD=$AGENT_SO DYNPROF_AGENT_DEVICES='$T/dev/davinci*'
	$CARD_USER $card 600 2> $T/file.log &
	DYNPROF_AGENT_PROTOCOL=v1 $CARD_USER $card 600 2> $T/v1.log &
	wait
	EOS
	chmod +x $T/app.sh
	dp_background --dynamic=on --output=$T/o --device="$T/dev/davinci*" $T/app.sh
	wait_until 10 lines_are 'target joined' 2 || fail "the workers did not join: $(cat $T/out)"
	dp_send start
	kill_mid_window 2
	for n in file v1; do expect_stopped_then_quit $n; done
	wait_until 15 all_gone $WD || fail "the watchdog did not exit"
	for p in $(pgrep -f "$CARD_USER $card 600"); do remember_pid $p; done
}

test_normal_quit_leaves_the_watchdog_nothing_to_do() {
	start_three
	dp_background --pid=$F,$A,$V --output=$T/o
	dp_send start
	wait_until 10 windows_open 3 || fail "windows did not open: $(cat $T/out)"
	WD=$(watchdog_of $DP_PID)
	[ -n "$WD" ] || fail "no watchdog"
	dp_send quit
	wait $DP_PID
	expect_status 0 $?
	# dynprof waited for it: gone now, not seconds later.
	all_gone $WD || fail "the watchdog $WD outlived a normal quit"
	expect_no_line "dynprof watchdog"
	for n in file abstract v1; do
		[ "$(asked $n)" = "start -> 0,stop -> 0,quit," ] || fail "$n: the agent saw $(asked $n)"
	done
}

# dynprof and its watchdog killed together (kill -9 of the process group):
# nothing from the client side ends the window.
kill_with_watchdog() {
	wait_until 10 windows_open $1 || fail "windows did not open: $(cat $T/out)"
	WD=$(watchdog_of $DP_PID)
	[ -n "$WD" ] || fail "no watchdog"
	kill -KILL $WD $DP_PID
	wait $DP_PID 2>/dev/null
}

test_agent_stops_an_orphaned_abstract_window_after_its_grace_period() {
	local a path; a=$(start_logged abstract DYNPROF_AGENT_FLAVOUR=abstract DYNPROF_AGENT_ORPHAN_GRACE=2)
	dp_background --pid=$a --output=$T/o
	dp_send start
	kill_with_watchdog 1
	path=$(window_path abstract)
	wait_until 5 grep -q "window of a vanished client left open (as CANN 8.5.0): stopped in 2 s" $T/abstract.log ||
		fail "no grace period started: $(cat $T/abstract.log)"
	[ ! -e $path/host/end_info ] || fail "stopped at once, not after the grace period"
	wait_until 15 test -s $path/host/end_info || fail "the orphaned window is still open: $(cat $T/abstract.log)"
	grep -q "^stopped by dynprof's agent at .*: the client that opened this window vanished while it was collecting at .*, and no client stopped it within 2 s (DYNPROF_AGENT_ORPHAN_GRACE)$" \
		$path/host/dynprof_orphaned.txt || fail "no note in the folder: $(cat $path/host/dynprof_orphaned.txt)"
	# The next client is told, and can open a window of its own.
	printf 'start\nstop\nquit\n' | dp --pid=$a --output=$T/o
	expect_status 0 $?
	expect_line "^dynamic profiling for pid $a stop success$"
	grep -q "told: the agent stopped the window of a vanished client: see $path/host/dynprof_orphaned.txt" $T/abstract.log ||
		fail "the next client was not told: $(cat $T/abstract.log)"
}

test_agent_orphan_grace_zero_keeps_the_window_for_a_later_client() {
	local a path; a=$(start_logged abstract DYNPROF_AGENT_FLAVOUR=abstract DYNPROF_AGENT_ORPHAN_GRACE=0)
	dp_background --pid=$a --output=$T/o
	dp_send start
	kill_with_watchdog 1
	path=$(window_path abstract)
	wait_until 5 grep -q "left open (as CANN 8.5.0), for good (DYNPROF_AGENT_ORPHAN_GRACE=0)" $T/abstract.log ||
		fail "$(cat $T/abstract.log)"
	sleep 2
	[ ! -e $path/host/end_info ] || fail "closed although the grace is 0 (never)"
	printf 'stop\nquit\n' | dp --pid=$a --output=$T/o
	expect_line "^dynamic profiling for pid $a stop success$"
	grep -q "told: the window of a client that vanished [0-9]* s ago is still open: $path" $T/abstract.log ||
		fail "the later client was not told: $(cat $T/abstract.log)"
	[ -s $path/host/end_info ] && [ ! -e $path/host/dynprof_orphaned.txt ] || fail "the later STOP did not end it, or a note was written"
	# The later dynprof says what it found and reports the folder its stop finished.
	expect_line "^\[INFO\] pid $a: $path is not finished: a window an earlier client left open; a stop ends and reports it$"
	expect_line "^\[INFO\] pid $a: window saved in $path$"
	grep -q "^$(basename $path)$" $T/o/*_profiling_output_record || fail "not recorded: $(cat $T/o/*_profiling_output_record)"
}

# The watchdog is a copy of dynprof: with dynprof's command line, a script
# signalling "dynprof" (pkill -f, pgrep -f) would hit it too.
watchdog_title_is_its_own() { # watchdog_title_is_its_own DESCRIPTION
	local t wd cmd; t=$(start_target)
	dp_background --pid=$t --output=$T/o
	wait_until 10 has_watchdog $DP_PID
	wd=$(watchdog_of $DP_PID)
	[ -n "$wd" ] || fail "$1: no watchdog child of dynprof $DP_PID"
	cmd=$(tr '\0' ' ' < /proc/$wd/cmdline | sed 's/ *$//')
	[ "$cmd" = "dynprof-wd: watchdog of dynprof pid $DP_PID" ] || fail "$1: the watchdog's command line is '$cmd'"
	[ "$(pgrep -f -- "--output=$T/o")" = "$DP_PID" ] ||
		fail "$1: pgrep -f of dynprof's command line finds $(pgrep -f -- "--output=$T/o" | tr '\n' ' '), not dynprof $DP_PID alone"
	dp_send quit
	wait $DP_PID
}

test_watchdog_has_a_command_line_of_its_own() {
	watchdog_title_is_its_own "with dynprof's usual arguments"
}

# A command line shorter than the title: it runs on into the environment.
test_watchdog_title_longer_than_dynprofs_arguments() {
	local t wd cmd own want; t=$(start_target)
	ln -s "$DP" $T/d
	DP=$T/d dp_background --pid=$t
	wait_until 10 has_watchdog $DP_PID || fail "no watchdog child of dynprof $DP_PID: $(cat $T/out)"
	wd=$(watchdog_of $DP_PID)
	own=$(wc -c < /proc/$DP_PID/cmdline)
	want="dynprof-wd: watchdog of dynprof pid $DP_PID"
	cmd=$(tr '\0' ' ' < /proc/$wd/cmdline | sed 's/ *$//')
	[ "$own" -lt ${#want} ] || fail "dynprof's own command line ($own bytes) is not shorter than the title: the test tests nothing"
	[ "$cmd" = "$want" ] || fail "the watchdog's command line is '$cmd'"
	dp_send quit
	wait $DP_PID
}
